// A terminal session's transcript read as it grows: items in the order they happened, even when the
// CLI appends a line after later ones. Claude Code 2.1.197 does that under load (a CI run saw the
// prompt's line written after the reply's), and the session's history and its handover as a chat
// must still begin with the prompt.
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TranscriptTail } from '../../src/host/terminal/claude-transcript.ts';

const line = (fields: Record<string, unknown>): string => `${JSON.stringify(fields)}\n`;
const prompt = line({ type: 'user', uuid: 'u1', parentUuid: null, timestamp: '2026-12-04T18:35:01.758Z', message: { role: 'user', content: 'KW-HELLO' } });
const thought = line({
  type: 'assistant',
  uuid: 'a1',
  parentUuid: 'u1',
  timestamp: '2026-12-04T18:35:01.965Z',
  message: { content: [{ type: 'thinking', thinking: 'The user greets me.' }] },
});
const reply = line({
  type: 'assistant',
  uuid: 'a2',
  parentUuid: 'a1',
  timestamp: '2026-12-04T18:35:01.967Z',
  message: { content: [{ type: 'text', text: 'Hello!' }] },
});
const next = line({ type: 'user', uuid: 'u2', parentUuid: 'a2', timestamp: '2026-12-04T18:35:02.232Z', message: { role: 'user', content: 'KW-NEXT' } });

function transcriptFile(): string {
  return path.join(mkdtempSync(path.join(tmpdir(), 'tether-transcript-')), 'f080ae22-107e-43ab-ab56-06e257685224.jsonl');
}

describe('a Claude Code transcript read as it grows', () => {
  it("puts a prompt whose line came after its reply's before the reply, and what follows after", async () => {
    const file = transcriptFile();
    writeFileSync(file, thought + reply);
    const tail = new TranscriptTail(file);
    expect((await tail.read()).items.map((i) => i.id)).toEqual(['a1', 'a2']);
    appendFileSync(file, prompt);
    // The batch carries only what is new; where it goes is the reader's order.
    expect((await tail.read()).items.map((i) => i.id)).toEqual(['u1']);
    appendFileSync(file, next);
    await tail.read();
    expect([...tail.transcript.items.values()].map((i) => `${i.kind}:${i.id}`)).toEqual(['user:u1', 'thinking:a1', 'assistant:a2', 'user:u2']);
  });

  it("keeps the file's order for lines in order, and an item that changes keeps its place", async () => {
    const file = transcriptFile();
    const toolUse = line({
      type: 'assistant',
      uuid: 'a3',
      parentUuid: 'a2',
      timestamp: '2026-12-04T18:35:02.000Z',
      message: { content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls' } }] },
    });
    const result = line({
      type: 'user',
      uuid: 'u3',
      parentUuid: 'a3',
      timestamp: '2026-12-04T18:35:02.100Z',
      message: { content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt' }] },
    });
    writeFileSync(file, prompt + thought + reply + toolUse + result + next);
    const tail = new TranscriptTail(file);
    await tail.read();
    const items = [...tail.transcript.items.values()];
    expect(items.map((i) => i.id)).toEqual(['u1', 'a1', 'a2', 'toolu_1', 'u2']);
    expect(items[3]).toMatchObject({ kind: 'tool', state: 'done', output: 'a.txt' });
  });
});
