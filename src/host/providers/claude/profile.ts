// How Tether drives this CLI, as provider.list tells it: a claim about Tether's driver (the roster
// lists it even where the CLI is not served), read by the provider's own info().
import type { CliProfile } from '../provider.ts';

export const CLAUDE_PROFILE: CliProfile = {
  name: 'Claude Code',
  command: 'claude',
  capabilities: {
    chat: true,
    terminal: false,
    hooks: false,
    // stream-json carries a tool's result whole, once it finished.
    streamsToolOutput: false,
    diffs: 'unified',
    attachments: true,
    mentions: true,
    denyReason: true,
    allowAlways: true,
    asyncQuestions: false,
    compaction: 'native',
    reportsCost: true,
    reportsContextWindow: true,
    reportsThinking: true,
    slashCommands: true,
  },
  resumeCommand: 'claude {flags} --resume={id}',
};
