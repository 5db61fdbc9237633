// How Tether drives this CLI, as provider.list tells it: a claim about Tether's driver (the roster
// lists it even where the CLI is not served), read by the provider's own info().
import type { CliProfile } from '../provider.ts';

export const COPILOT_PROFILE: CliProfile = {
  name: 'Copilot CLI',
  command: 'copilot',
  capabilities: {
    chat: true,
    terminal: false,
    hooks: false,
    // Copilot sends a running shell's output in `tool_call_update`s, but the ACP adapter shows a
    // tool's output once it ended.
    streamsToolOutput: false,
    diffs: 'unified',
    attachments: true,
    mentions: false,
    // ACP's `reject_once` carries no words.
    denyReason: false,
    // Its `allow_always` option holds for the rest of the session.
    allowAlways: true,
    // No ask-the-user tool over ACP.
    asyncQuestions: false,
    // Its own `/compact`, sent as a prompt.
    compaction: 'native',
    // `usage_update` has the context (used/size) but no cost, at least with your own model provider.
    reportsCost: false,
    reportsContextWindow: true,
    reportsThinking: true,
    slashCommands: true,
  },
  resumeCommand: 'copilot {flags} --resume={id}',
};
