// The host's rules for every value from a client (or the relay) that reaches an agent CLI's command
// line or its launch protocol (`thread/resume`, `session/load`): a session id, a model, a model
// option. Each is checked against the shape the CLI documents for it, here and only here, and a
// value that does not fit is refused with `bad-request` naming the field, before any process starts.
//
// The shapes (as observed with the pinned CLIs, see DEVELOPERS.md):
//   - Claude Code, Codex, Gemini CLI and Copilot CLI name their sessions by UUID (Claude's `--resume`
//     would also take a session *title*, which this host never passes);
//   - a model on a command line is a slug: a letter or digit, then letters, digits or . _ : / -;
//   - an option value is one of the model's own choices.
// A value that passed is still given as `--flag=value` (`flagValue`), so even a CLI whose flag takes
// an optional value (Claude's `--resume [value]`) can never read it as a flag of its own.
import { ProtocolError } from '../../contracts/errors.ts';
import { AGENT_SESSION_ID_MAX, AgentSessionIdSchema, MODEL_NAME_MAX } from '../../contracts/index.ts';

/** A kind of session id a backend names its conversations with. */
export interface SessionIdShape {
  /** What it is, as a refusal says it: `a UUID`. */
  readonly name: string;
  test(value: string): boolean;
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Claude Code's, Codex's, Gemini CLI's and Copilot CLI's session (thread) ids. */
export const UUID_SESSION_ID: SessionIdShape = { name: 'a UUID', test: (value) => UUID.test(value) };

/** Any backend's that says no more (an ACP agent, the scripted backend): the contract's AgentSessionId. */
export const AGENT_SESSION_ID: SessionIdShape = {
  name: `a CLI session id (a letter or digit, then letters, digits or . _ : -, at most ${AGENT_SESSION_ID_MAX})`,
  test: (value) => value !== '' && AgentSessionIdSchema.safeParse(value).success,
};

/** A model as a command line carries it. */
const MODEL_SLUG = /^[A-Za-z0-9][A-Za-z0-9._:/-]*$/;
/** An option value as a launch carries it (it must be one of the model's choices as well). */
const OPTION_VALUE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const OPTION_VALUE_MAX = 64;

/** `value` as `field`'s session id, or `bad-request`. */
export function admitSessionId(field: string, value: unknown, shape: SessionIdShape): string {
  if (typeof value === 'string' && shape.test(value)) return value;
  throw refusal(field, value, shape.name);
}

/** `value` as the model a command line names, or `bad-request`. */
export function admitModelSlug(field: string, value: unknown): string {
  if (typeof value === 'string' && value.length <= MODEL_NAME_MAX && MODEL_SLUG.test(value)) return value;
  throw refusal(field, value, `a model slug (a letter or digit, then letters, digits or . _ : / -, at most ${MODEL_NAME_MAX})`);
}

/** `value` as one of `choices` (a model option's own list), or `bad-request`. */
export function admitChoice(field: string, value: unknown, choices: readonly string[]): string {
  if (typeof value === 'string' && value.length <= OPTION_VALUE_MAX && OPTION_VALUE.test(value) && choices.includes(value)) return value;
  throw refusal(field, value, choices.length ? `one of ${choices.join(', ')}` : 'an option this model has (it has none)');
}

/** `value` as a model option's value when the model's own list is not known here (its shape only), or `bad-request`. */
export function admitOptionValue(field: string, value: unknown): string {
  if (typeof value === 'string' && value.length <= OPTION_VALUE_MAX && OPTION_VALUE.test(value)) return value;
  throw refusal(field, value, 'an option value (a letter or digit, then letters, digits or . _ -)');
}

/** A flag with its value in one argument, the one form no CLI parser splits into two. */
export function flagValue(flag: `--${string}`, value: string): string {
  return `${flag}=${value}`;
}

function refusal(field: string, value: unknown, expected: string): ProtocolError {
  return new ProtocolError('bad-request', `${field} must be ${expected}; got ${shown(value)}`);
}

/** The refused value, short and on one line (it may be anything). */
function shown(value: unknown): string {
  if (typeof value !== 'string') return typeof value;
  const text = JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  return text;
}

// The host config's own values that reach a command line or an environment (a backend's `command`,
// `args`, `env`; an ACP agent's `name` and `modes`). The config is the machine owner's, but a value
// that is not what it claims to be (a NUL that cuts an argument, a newline in a variable, a variable
// name no shell could set) is refused when the config is read, naming the field, before anything runs.

/** Control characters (C0, DEL, C1): no argument, variable or name carries them. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** A bare command looked up on PATH: never a flag, never a shell word. */
const BARE_COMMAND = /^[A-Za-z0-9][A-Za-z0-9._+-]*$/;
/** A variable name a process environment can carry (the same rule as accounts' variables). */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** An ACP session mode id as the config names it. */
const MODE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
export const CONFIG_ARG_MAX = 4096;
export const CONFIG_ARGS_MAX = 64;
export const CONFIG_ENV_VALUE_MAX = 32 * 1024;

/** Why `value` cannot be a config's `command`, or null. */
export function configCommandProblem(value: string): string | null {
  if (value.length > CONFIG_ARG_MAX || CONTROL.test(value)) return 'a command has no control characters and at most 4096 characters';
  if (value.includes('/') || value.includes('\\')) return null;
  return BARE_COMMAND.test(value) ? null : 'a command is a path or a bare name (a letter or digit, then letters, digits or . _ + -)';
}

/** Why `value` cannot be one of a config's `args`, or null. */
export function configArgProblem(value: string): string | null {
  return value.length > CONFIG_ARG_MAX || value.includes('\u0000') ? 'an argument has no NUL and at most 4096 characters' : null;
}

/** Why `value` cannot be a config's variable value, or null. */
export function configEnvValueProblem(value: string): string | null {
  return value.length > CONFIG_ENV_VALUE_MAX || CONTROL.test(value.replace(/\t/g, ''))
    ? "a variable's value has no control characters but tabs and at most 32 KiB"
    : null;
}

/** Why `value` cannot be an agent's display name, or null. */
export function configNameProblem(value: string): string | null {
  return value.trim() === '' || value.length > 64 || CONTROL.test(value) ? 'a name is 1 to 64 characters without control characters' : null;
}

/** Why `value` cannot be an ACP session mode id, or null. */
export function configModeProblem(value: string): string | null {
  return MODE_ID.test(value) ? null : 'a mode id is a letter or digit, then letters, digits or . _ : - (at most 64)';
}
