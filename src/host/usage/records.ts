// Reading the CLIs' own session files, one line at a time, into usage records: what one model call
// used, when, in which session and folder. Each reader is pure (a line in, a record or nothing out)
// and keeps only what a later line needs (Codex names its model and folder once, before the calls).
//
// - Claude Code (`<config>/projects/<cwd-slug>/<session>.jsonl`, subagents under
//   `<session>/subagents/`): every `assistant` line carries the API message's `usage`; a message
//   split into several lines (one per content block) repeats the same request and usage, so a call
//   is counted once by its `requestId` (the scanner keeps those keys across files: a forked session
//   copies its parent's lines).
// - Codex (`<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-*.jsonl`): `session_meta` names the session and
//   folder, `turn_context` the model; each call is a `token_usage_record` (0.171), and in files
//   without those a `token_count` event whose running total moved (its `last_token_usage`). Codex's
//   `input_tokens` include the cached ones, and `output_tokens` the reasoning.
//
// Lines that cannot matter are skipped before parsing: the scan reads gigabytes of tool output.
import type { UsageProvider, UsageTotals } from '../../contracts/index.ts';

export interface UsageRecord {
  at: number;
  model: string;
  session: string;
  folder: string;
  totals: UsageTotals;
  /** Set when the same call may appear in more than one line or file. */
  dedupe?: string;
}

export interface LineReader {
  read(line: string): UsageRecord | null;
  /** What this reader must remember to go on after a restart (JSON). */
  state(): unknown;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const int = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0);
const text = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);

function parse(line: string): Json | null {
  try {
    const value: unknown = JSON.parse(line);
    return isObject(value) ? value : null;
  } catch {
    return null; // a torn or foreign line: nothing to count
  }
}

export class ClaudeLineReader implements LineReader {
  read(line: string): UsageRecord | null {
    if (!line.includes('"usage"') || !line.includes('"assistant"')) return null;
    const entry = parse(line);
    if (!entry || entry.type !== 'assistant' || !isObject(entry.message)) return null;
    const message = entry.message;
    const usage = message.usage;
    const model = text(message.model);
    // `<synthetic>`: a message the CLI wrote itself (an API error shown as a reply), no call was made.
    if (!isObject(usage) || !model || model === '<synthetic>') return null;
    const at = typeof entry.timestamp === 'string' ? Date.parse(entry.timestamp) : NaN;
    if (!Number.isFinite(at)) return null;
    const creation = isObject(usage.cache_creation) ? usage.cache_creation : {};
    const cacheWrite = int(usage.cache_creation_input_tokens);
    const totals: UsageTotals = {
      calls: 1,
      input: int(usage.input_tokens),
      cacheRead: int(usage.cache_read_input_tokens),
      cacheWrite,
      cacheWrite1h: Math.min(cacheWrite, int(creation.ephemeral_1h_input_tokens)),
      output: int(usage.output_tokens),
      reasoning: 0,
    };
    // The API request is the call; lines without one (older builds) fall back to the message id.
    const requestId = text(entry.requestId);
    const id = text(message.id);
    const dedupe = requestId ?? (id ? `message:${id}` : undefined);
    return {
      at,
      model,
      session: text(entry.sessionId) ?? '',
      folder: text(entry.cwd) ?? '',
      totals,
      ...(dedupe !== undefined ? { dedupe } : {}),
    };
  }

  state(): unknown {
    return null;
  }
}

export interface CodexReaderState {
  model: string;
  folder: string;
  session: string;
  /** The last `token_count` total seen (a repeat of it is the same call). */
  lastTotal: number;
  /** This file has per-call records, so `token_count` is not counted. */
  records: boolean;
}

const CODEX_WORDS = ['"token_usage_record"', '"token_count"', '"turn_context"', '"session_meta"', '"thread_settings_applied"'];

export class CodexLineReader implements LineReader {
  private current: CodexReaderState;

  constructor(state?: unknown) {
    const s = isObject(state) ? state : {};
    this.current = {
      model: text(s.model) ?? 'unknown',
      folder: text(s.folder) ?? '',
      session: text(s.session) ?? '',
      lastTotal: int(s.lastTotal),
      records: s.records === true,
    };
  }

  read(line: string): UsageRecord | null {
    if (!CODEX_WORDS.some((word) => line.includes(word))) return null;
    const entry = parse(line);
    if (!entry || !isObject(entry.payload)) return null;
    const payload = entry.payload;
    const state = this.current;
    switch (entry.type) {
      case 'session_meta':
        state.session = text(payload.id) ?? text(payload.session_id) ?? state.session;
        state.folder = text(payload.cwd) ?? state.folder;
        return null;
      case 'turn_context':
        state.model = text(payload.model) ?? state.model;
        state.folder = text(payload.cwd) ?? state.folder;
        return null;
      case 'token_usage_record':
        state.records = true;
        return this.record(entry, payload.usage);
      case 'event_msg':
        if (payload.type === 'thread_settings_applied' && isObject(payload.thread_settings)) {
          state.model = text(payload.thread_settings.model) ?? state.model;
          return null;
        }
        if (payload.type === 'token_count' && !state.records && isObject(payload.info)) {
          const total = isObject(payload.info.total_token_usage) ? int(payload.info.total_token_usage.total_tokens) : 0;
          if (total === state.lastTotal) return null; // the same numbers again (a repeat after a rate-limit read)
          state.lastTotal = total;
          return this.record(entry, payload.info.last_token_usage);
        }
        return null;
      default:
        return null;
    }
  }

  private record(entry: Json, usage: unknown): UsageRecord | null {
    if (!isObject(usage)) return null;
    const at = typeof entry.timestamp === 'string' ? Date.parse(entry.timestamp) : NaN;
    if (!Number.isFinite(at)) return null;
    // Cached and cache-written tokens are part of Codex's `input_tokens`; `input` here is the rest.
    const input = int(usage.input_tokens);
    const cached = Math.min(input, int(usage.cached_input_tokens));
    const written = Math.min(input - cached, int(usage.cache_write_input_tokens));
    const output = int(usage.output_tokens);
    const { model, session, folder } = this.current;
    return {
      at,
      model,
      session,
      folder,
      totals: {
        calls: 1,
        input: input - cached - written,
        cacheRead: cached,
        cacheWrite: written,
        cacheWrite1h: 0,
        output,
        reasoning: Math.min(output, int(usage.reasoning_output_tokens)),
      },
    };
  }

  state(): unknown {
    return { ...this.current };
  }
}

export function lineReader(provider: UsageProvider, state?: unknown): LineReader {
  return provider === 'claude' ? new ClaudeLineReader() : new CodexLineReader(state);
}
