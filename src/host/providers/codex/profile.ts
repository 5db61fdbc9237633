// How Tether drives this CLI, as provider.list tells it: a claim about Tether's driver (the roster
// lists it even where the CLI is not served), read by the provider's own info().
import type { CliProfile } from '../provider.ts';

export const CODEX_PROFILE: CliProfile = {
  name: 'Codex',
  command: 'codex',
  capabilities: {
    chat: true,
    terminal: false,
    hooks: false,
    streamsToolOutput: true,
    diffs: 'unified',
    attachments: true,
    mentions: false,
    // A declined command or edit reaches Codex as a decision only.
    denyReason: false,
    allowAlways: true,
    // `requestUserInput` with `isBlocking: false`.
    asyncQuestions: true,
    compaction: 'native',
    // Tokens against the context window, never USD.
    reportsCost: false,
    reportsContextWindow: true,
    reportsThinking: true,
    slashCommands: false,
  },
  resumeCommand: 'codex {flags} resume -- {id}',
};
