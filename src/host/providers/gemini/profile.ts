// How Tether drives this CLI, as provider.list tells it: a claim about Tether's driver (the roster
// lists it even where the CLI is not served), read by the provider's own info().
import type { CliProfile } from '../provider.ts';

export const GEMINI_PROFILE: CliProfile = {
  name: 'Gemini CLI',
  command: 'gemini',
  capabilities: {
    chat: true,
    terminal: false,
    hooks: false,
    // A shell call's update carries no output at all, streamed or final.
    streamsToolOutput: false,
    diffs: 'unified',
    attachments: true,
    mentions: false,
    // ACP's `reject_once` carries no words.
    denyReason: false,
    allowAlways: true,
    asyncQuestions: false,
    compaction: 'none',
    // Token counts in the prompt result's `_meta.quota`, no window size and no USD.
    reportsCost: false,
    reportsContextWindow: false,
    reportsThinking: true,
    slashCommands: true,
  },
  resumeCommand: 'gemini {flags} --resume={id}',
};
