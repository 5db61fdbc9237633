// What Copilot may do without asking is fixed when it starts, by flags; its ACP session modes
// (agent, plan, autopilot) are ways of working, not permission levels. So each runtime mode is a
// command line, and a mode change starts a new process that loads the session.
import type { RuntimeMode } from '../../../contracts/index.ts';

/**
 * The flags per runtime mode, Copilot's word for them, and what that is as a runtime mode. Copilot
 * has no judge that works offline between "edits allowed" and "everything allowed", so `auto` runs
 * as `auto-accept-edits` (and says so).
 */
export const COPILOT_FLAGS: Record<RuntimeMode, { flags: string[]; word: string; effective: RuntimeMode }> = {
  supervised: { flags: [], word: 'ask', effective: 'supervised' },
  'auto-accept-edits': { flags: ['--allow-tool=write'], word: 'allow-tool=write', effective: 'auto-accept-edits' },
  auto: { flags: ['--allow-tool=write'], word: 'allow-tool=write', effective: 'auto-accept-edits' },
  'full-access': { flags: ['--allow-all'], word: 'allow-all', effective: 'full-access' },
};

/** Copilot's ACP session modes. Every chat runs in `agent`; `autopilot` allows everything and keeps going unasked. */
export const AGENT_MODE = 'https://agentclientprotocol.com/protocol/session-modes#agent';
export const AUTOPILOT_MODE = 'https://agentclientprotocol.com/protocol/session-modes#autopilot';

/** The model choice that leaves the model to Copilot's own setting (`COPILOT_MODEL`, its config, or its default). */
export const COPILOT_DEFAULT_MODEL = 'default';
