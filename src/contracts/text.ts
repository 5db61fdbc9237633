import type { ChatItem, ChatTurnItem } from './chat.ts';

let graphemes: Intl.Segmenter | undefined;

/**
 * `text` cut to at most `max` UTF-16 code units, on a boundary a person sees
 * as one character: never between the halves of a surrogate pair, never inside
 * an emoji sequence. May answer "" when the first character alone is too long.
 */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  let end = 0;
  for (const { segment } of graphemes.segment(text)) {
    if (end + segment.length > max) break;
    end += segment.length;
  }
  return text.slice(0, end);
}

/**
 * Decoded size of raw base64, from its length alone: cheap enough to check a
 * 10 MiB upload without decoding it. Does not validate the text.
 */
export function attachmentBytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

export type AttachmentImageMime = 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif';

const IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);
const GENERIC_BINARY_TYPES: ReadonlySet<string> = new Set(['application/octet-stream', 'binary/octet-stream']);
const IMAGE_EXTENSIONS: Readonly<Record<string, AttachmentImageMime>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
};

/**
 * The image type a model can be shown, or null. The declared type wins, so a
 * declared PDF stays a PDF whatever its name; the extension only speaks when
 * the type is empty or a generic binary one. Never reads the bytes.
 */
export function attachmentImageMime(file: { name: string; mime: string }): AttachmentImageMime | null {
  const type = (file.mime.split(';', 1)[0] ?? '').trim().toLowerCase();
  if (IMAGE_TYPES.has(type)) return type as AttachmentImageMime;
  if (type !== '' && !GENERIC_BINARY_TYPES.has(type)) return null;
  const dot = file.name.lastIndexOf('.');
  if (dot === -1) return null;
  const extension = file.name.slice(dot + 1).toLowerCase();
  return Object.hasOwn(IMAGE_EXTENSIONS, extension) ? (IMAGE_EXTENSIONS[extension] ?? null) : null;
}

/**
 * Fills a provider's `resumeCommand` template. The session id is single-quoted
 * for a POSIX shell; the flags go in verbatim and unquoted, so a caller quotes
 * any flag that comes from outside.
 *
 * Caveat kept on purpose: `{id}` is replaced with `String.prototype.replace`,
 * so `$$`, `$&`, `` $` `` and `$'` inside the id are replacement patterns.
 */
export function resumeCommandFor(template: string, sessionId: string, flags: readonly string[] = []): string {
  const quoted = `'${sessionId.replaceAll("'", `'\\''`)}'`;
  return template
    .split(' ')
    .flatMap((word) => (word === '{flags}' ? flags : [word.replace('{id}', quoted)]))
    .join(' ');
}

const WORKFLOW_AGENT_PREFIX = 'workflow-agent:';

/** A workflow's agent has no tool call of its own; this names it for `chat.subagent`. */
export function workflowAgentRef(agentId: string): string {
  return WORKFLOW_AGENT_PREFIX + agentId;
}

/** The agent id inside a `workflowAgentRef`, or null for any other reference. */
export function workflowAgentIdOf(ref: string): string | null {
  if (!ref.startsWith(WORKFLOW_AGENT_PREFIX)) return null;
  const agentId = ref.slice(WORKFLOW_AGENT_PREFIX.length);
  return agentId === '' ? null : agentId;
}

const NOT_RESUMED_PREFIX = 'This turn could not be resumed after the machine restarted: ';

/** Text of the warning note a host writes when a restart could not take a turn up again. */
export function notResumedNote(reason: string): string {
  return NOT_RESUMED_PREFIX + reason;
}

/**
 * Tells a turn a restart aborted from one a person stopped: only the former
 * carries the host's `notResumedNote` warning.
 */
export function abortedByMachine(turn: Pick<ChatTurnItem, 'id' | 'state'>, items: readonly ChatItem[]): boolean {
  if (turn.state !== 'aborted') return false;
  return items.some((item) => item.kind === 'note' && item.turnId === turn.id && item.level === 'warning' && item.text.startsWith(NOT_RESUMED_PREFIX));
}
