// A Codex subagent's own work, read from its thread's rollout (`chat.subagent`). Codex 0.171 writes
// every thread, a spawned agent's too, to `<CODEX_HOME>/sessions/<y>/<m>/<d>/rollout-<time>-<thread
// id>.jsonl`; a subagent's first line, `session_meta`, names its own id and the thread that spawned it
// (`parent_thread_id`). Its lines are read as a terminal session's are (terminal/codex-transcript.ts),
// and its replies and tools put under the row (`parentToolUseId`).
//
// The thread id comes from the chat's record (the row's `native.threadId`, which Codex named): it is
// still checked to be a UUID before it names a file, the folders walked are only those whose names
// are dates, and a rollout whose meta does not name this chat's thread as its parent is not read.
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { ChatItem } from '../../../contracts/index.ts';
import { CodexTranscript } from '../../terminal/codex-transcript.ts';
import type { TranscriptChange } from '../../terminal/claude-transcript.ts';
import { CODEX_THREAD_IDS } from './driver.ts';

/** The rollout of thread `threadId` under `sessions` (`<CODEX_HOME>/sessions`), newest day first; null when there is none. */
export async function findRollout(sessions: string, threadId: string): Promise<string | null> {
  if (!CODEX_THREAD_IDS.test(threadId)) return null;
  const suffix = `-${threadId}.jsonl`;
  for (const year of await folders(sessions, /^\d{4}$/)) {
    for (const month of await folders(path.join(sessions, year), /^\d{2}$/)) {
      for (const day of await folders(path.join(sessions, year, month), /^\d{2}$/)) {
        const folder = path.join(sessions, year, month, day);
        const name = (await entries(folder)).find((e) => e.isFile() && e.name.startsWith('rollout-') && e.name.endsWith(suffix))?.name;
        if (name) return path.join(folder, name);
      }
    }
  }
  return null;
}

/**
 * The items of subagent thread `threadId`'s rollout, its work under `toolUseId`; null when the
 * rollout is not that thread's or not a subagent of `parentThreadId`.
 */
export function subagentRolloutItems(text: string, parentThreadId: string, threadId: string, toolUseId: string): ChatItem[] | null {
  const transcript = new CodexTranscript();
  const change: TranscriptChange = { items: [], settledToolUseIds: [] };
  let first = true;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (first) {
      first = false;
      if (!isSubagentMeta(line, parentThreadId, threadId)) return null;
      continue;
    }
    transcript.take(line, change);
  }
  if (first) return null;
  return [...transcript.items.values()].map((item) => (item.kind === 'assistant' || item.kind === 'tool' ? { ...item, parentToolUseId: toolUseId } : item));
}

function isSubagentMeta(line: string, parentThreadId: string, threadId: string): boolean {
  let meta: unknown;
  try {
    meta = JSON.parse(line);
  } catch {
    return false;
  }
  const entry = typeof meta === 'object' && meta !== null ? (meta as { type?: unknown; payload?: { id?: unknown; parent_thread_id?: unknown } }) : {};
  return entry.type === 'session_meta' && entry.payload?.id === threadId && entry.payload.parent_thread_id === parentThreadId;
}

/** The subfolders of `folder` whose names fit `shape`, newest (largest) first. */
async function folders(folder: string, shape: RegExp): Promise<string[]> {
  return (await entries(folder))
    .filter((e) => e.isDirectory() && shape.test(e.name))
    .map((e) => e.name)
    .sort()
    .reverse();
}

async function entries(folder: string): Promise<Dirent[]> {
  try {
    return await readdir(folder, { withFileTypes: true });
  } catch {
    return [];
  }
}
