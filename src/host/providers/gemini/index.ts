// The Gemini CLI backend: `gemini --acp --model=<model>` per chat, through the ACP adapter (../acp).
// This file is only what makes Gemini Gemini (as observed with @google/gemini-cli 0.61.0):
//   - an account is a folder: `GEMINI_CLI_HOME` (the folder holding `.gemini/`);
//   - it announces a tool call only inside its permission request (no `tool_call` first), and sends
//     nothing more about a call that was refused: the adapter handles both generically;
//   - each thought arrives whole as `**subject**\ndescription` (`****\n` when it has no subject);
//   - tokens come back in the prompt result's `_meta.quota.token_count` (the turn's sums; no
//     `usage_update`, no context window, no cost), a 429 from the model is a JSON-RPC error 429;
//   - after answering `session/load` it goes on replaying the history (ACP says before), and a load
//     in the minute the session was created destroys it (its transcript is named by minute and id).
import { constants } from 'node:fs';
import { access, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ProtocolError, type ModelInfo, type RuntimeMode } from '../../../contracts/index.ts';
import type { ProviderOutput } from '../provider.ts';
import { AcpProvider, type AcpAgentSpec, type AcpCommandLine } from '../acp/index.ts';
import { record } from '../acp/mapper.ts';
import { expandHome } from '../acp/driver.ts';
import { GEMINI_PROFILE } from './profile.ts';
import { admitModelSlug, flagValue, UUID_SESSION_ID } from '../cli-values.ts';

export interface GeminiLaunch {
  /** The `gemini` executable (default: `gemini` on PATH). */
  command?: string;
  /** Added after `--acp --model=<model>`. */
  args?: readonly string[];
  env?: Readonly<Record<string, string>>;
  /** GEMINI_CLI_HOME of the default account; absent = Gemini's own (`~`). */
  home?: string;
  clientVersion: string;
}

/** The choice that leaves the model to Gemini's own routing (`-m auto`). */
export const GEMINI_DEFAULT_MODEL = 'auto';

/** What 0.61.0 offers an API-key account before a session names its own list. */
export const GEMINI_MODELS: ModelInfo[] = [
  { slug: 'auto', name: 'Auto (Gemini picks)', legacy: false, isDefault: true, options: [] },
  { slug: 'gemini-2.5-pro', name: 'Gemini 2.5 Pro', legacy: false, isDefault: false, options: [] },
  { slug: 'gemini-3.5-flash', name: 'Gemini 3.5 Flash', legacy: false, isDefault: false, options: [] },
  { slug: 'gemini-3.1-flash-lite', name: 'Gemini 3.1 Flash Lite', legacy: false, isDefault: false, options: [] },
  { slug: 'gemini-3.1-pro-preview', name: 'Gemini 3.1 Pro (preview)', legacy: false, isDefault: false, options: [] },
  { slug: 'gemini-3-flash-preview', name: 'Gemini 3 Flash (preview)', legacy: false, isDefault: false, options: [] },
];

/** Gemini's session modes are its approval modes. It has nothing between auto-edit and yolo, so `auto` runs narrower. */
export const GEMINI_MODES: Record<RuntimeMode, string> = {
  supervised: 'default',
  'auto-accept-edits': 'autoEdit',
  auto: 'autoEdit',
  'full-access': 'yolo',
};

export function geminiRuntimeMode(modeId: string): RuntimeMode | undefined {
  switch (modeId) {
    case 'default':
    case 'plan':
      return 'supervised';
    case 'autoEdit':
      return 'auto-accept-edits';
    case 'yolo':
      return 'full-access';
    default:
      return undefined;
  }
}

/**
 * Gemini 0.61's ACP server runs a prompt whose text starts with `/` or `$` as one of its own commands
 * when the first word names one, with no permission asked: `/extensions install|link <path>` installs
 * an extension (its MCP servers run at the next start), `/restore` puts a checkpoint's files back. A
 * message may not: those two are refused (the rest only show or list). Its matching is mirrored:
 * the text trimmed, the character after the first dropped, words split on whitespace.
 */
const GEMINI_ACTING_COMMANDS = new Set(['extensions', 'restore']);

export function admitGeminiPrompt(text: string): void {
  const trimmed = text.trim();
  if (!trimmed.startsWith('/') && !trimmed.startsWith('$')) return;
  const first = trimmed.slice(1).trim().split(/\s+/)[0] ?? '';
  if (GEMINI_ACTING_COMMANDS.has(first)) {
    throw new ProtocolError(
      'bad-request',
      `Gemini CLI would run its own /${first} command from this message, outside its permission checks; this host does not let a message do that`,
    );
  }
}

export function geminiSpec(launch: GeminiLaunch): AcpAgentSpec {
  const command = launch.command ?? GEMINI_PROFILE.command;
  return {
    kind: 'gemini',
    name: GEMINI_PROFILE.name,
    admitPrompt: admitGeminiPrompt,
    commandLine: ({ selection, accountHome, accountEnv }) => {
      const home = accountHome ?? (launch.home ? expandHome(launch.home) : undefined);
      return {
        command,
        args: ['--acp', flagValue('--model', admitModelSlug('selection.model', selection.model)), ...(launch.args ?? [])],
        env: { ...process.env, ...launch.env, ...accountEnv, ...(home ? { GEMINI_CLI_HOME: home } : {}) },
      };
    },
    sessionIds: UUID_SESSION_ID,
    installedVersion: geminiPackageVersion,
    models: GEMINI_MODELS,
    defaultModel: GEMINI_DEFAULT_MODEL,
    capabilities: GEMINI_PROFILE.capabilities,
    resumeCommand: GEMINI_PROFILE.resumeCommand,
    modes: GEMINI_MODES,
    runtimeModeOf: geminiRuntimeMode,
    quirks: {
      thought: geminiThought,
      promptUsage: geminiUsage,
      modelUsed: geminiModelUsed,
      limitOf: (error) => (error.code === 429 ? { kind: 'usage' } : undefined),
      replaysAfterLoad: true,
      loadNeedsNewMinute: true,
    },
  };
}

export function geminiProvider(launch: GeminiLaunch, options: { probe?: boolean } = {}): AcpProvider {
  return new AcpProvider(geminiSpec(launch), { clientVersion: launch.clientVersion, ...options });
}

/** With `-m auto` Gemini picks a model per request: the last one `_meta.quota.model_usage` names answered. */
export function geminiModelUsed(response: { _meta?: Record<string, unknown> | null }): string | null {
  const usage = record(record(response._meta).quota).model_usage;
  const last = Array.isArray(usage) ? record(usage.at(-1)).model : undefined;
  return typeof last === 'string' && last !== '' ? last : null;
}

/**
 * The version of the `@google/gemini-cli` package the command is (npm links `gemini` to its
 * `bundle/gemini.js`): what `gemini --version` prints, without loading its bundle, which takes
 * seconds (fifteen on a busy machine, longer than a relay waits for `provider.list`). Null when the
 * command is not that package's, and the probe runs it instead.
 */
export async function geminiPackageVersion(commandLine: AcpCommandLine): Promise<string | null> {
  const file = await onPath(commandLine.command, commandLine.env.PATH ?? '');
  if (!file) return null;
  const script = await realpath(file);
  const pkg = JSON.parse(await readFile(path.join(path.dirname(script), '..', 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
  return pkg.name === '@google/gemini-cli' && typeof pkg.version === 'string' ? pkg.version : null;
}

async function onPath(command: string, searchPath: string): Promise<string | null> {
  const candidates = command.includes('/')
    ? [command]
    : searchPath
        .split(path.delimiter)
        .filter(Boolean)
        .map((dir) => path.join(dir, command));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** A whole thought as `**subject**\ndescription`; an empty subject's `****` is dropped, thoughts kept apart. */
export function geminiThought(text: string, first: boolean): string {
  const shown = text.startsWith('****\n') ? text.slice(5) : text;
  return first ? shown : `\n\n${shown}`;
}

/** `_meta.quota.token_count`: the turn's input and output tokens, summed over its model requests. */
export function geminiUsage(response: { _meta?: Record<string, unknown> | null }): ProviderOutput | null {
  const count = record(record(record(response._meta).quota).token_count);
  const input = count.input_tokens;
  const output = count.output_tokens;
  if (typeof input !== 'number' || typeof output !== 'number') return null;
  // The sums are the context's size exactly when the turn made one request, and an upper bound otherwise.
  return { type: 'usage', contextTokens: Math.max(0, Math.round(input + output)) };
}
