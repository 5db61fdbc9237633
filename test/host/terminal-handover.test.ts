// "Continue here" and back, on a real HostCore with the real hook client: a terminal session becomes a
// chat once the terminal let go; taken back to the terminal (the chat's resume command), the chat
// refuses to start its own CLI on the same session while the terminal runs it, and lets an idle one go; continued here again,
// the same chat gets what the terminal added since, between notes that say where it happened.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HostCore } from '../../src/host/chats/core.ts';
import { TestClient, openCore, runHookClient, tempDir, until } from './harness.ts';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const line = (uuid: string, role: 'user' | 'assistant', text: string, at: number) =>
  JSON.stringify(
    role === 'user'
      ? { type: 'user', uuid, timestamp: new Date(at).toISOString(), message: { role: 'user', content: text } }
      : { type: 'assistant', uuid, timestamp: new Date(at).toISOString(), message: { content: [{ type: 'text', text }] } },
  ) + '\n';

describe('a terminal session continued here, in the terminal again, then here again', () => {
  it("keeps one chat whose thread says where each part happened, and never runs the chat's CLI while the terminal has it", async () => {
    const { dir, cleanup } = tempDir('tether-handover-');
    cleanups.push(cleanup);
    const home = path.join(dir, 'claude-home');
    const projects = path.join(home, 'projects', '-work');
    mkdirSync(projects, { recursive: true });
    const core: HostCore = await openCore(dir, { hookTargets: [{ kind: 'claude', configDir: home }] });
    cleanups.push(() => core.close());
    await core.terminal.start();
    const client = new TestClient(core, 'phone', true);
    const id = 'hand-1';
    const transcript = path.join(projects, `${id}.jsonl`);
    const base = { session_id: id, transcript_path: transcript, cwd: dir };
    const status = () => core.terminal.list().sessions.find((s) => s.sessionId === id)?.agent?.status;
    const t0 = Date.now() - 60_000;
    writeFileSync(transcript, line('u-1', 'user', 'first, in the terminal', t0) + line('a-1', 'assistant', 'Hello from the terminal.', t0 + 1000));

    await runHookClient('claude', dir, { ...base, hook_event_name: 'SessionStart', source: 'startup' });
    await until(() => status() === 'idle', 'the session', 10_000);
    expect(await client.request('session.resume', { sessionId: id })).toMatchObject({ ok: false, error: { code: 'chat-busy' } });
    await runHookClient('claude', dir, { ...base, hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' });
    await until(() => status() === 'exited', 'exited', 10_000);
    const info = await client.ok('session.resume', { sessionId: id });
    const chatId = info.chatId as string;
    const kinds = () => core.session(chatId).thread.items.map((i) => (i.kind === 'note' ? `note:${i.text}` : `${i.kind}:${'text' in i ? i.text : ''}`));
    expect(kinds()).toEqual([
      'user:first, in the terminal',
      'assistant:Hello from the terminal.',
      'note:Everything above happened in the terminal; the conversation continues here.',
    ]);

    // Back in the terminal (`claude --resume=<id>`): the chat may not run its own CLI on the session meanwhile.
    await runHookClient('claude', dir, { ...base, hook_event_name: 'SessionStart', source: 'resume' });
    await until(() => status() === 'idle', 'the session live again', 10_000);
    const refused = await client.request('chat.send', { chatId, text: 'from the phone, too early' });
    expect(refused).toMatchObject({ ok: false, error: { code: 'chat-busy', message: expect.stringContaining('A terminal runs this conversation now') } });
    expect(core.session(chatId).thread.items.some((i) => i.kind === 'user' && i.text.includes('too early'))).toBe(false);
    expect(await client.request('session.resume', { sessionId: id })).toMatchObject({ ok: false, error: { code: 'chat-busy' } });
    const t1 = Date.now() + 1000;
    appendFileSync(transcript, line('u-2', 'user', 'second, in the terminal', t1) + line('a-2', 'assistant', 'Still here.', t1 + 1000));
    await runHookClient('claude', dir, { ...base, hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' });
    await until(() => status() === 'exited', 'exited again', 10_000);

    // Continued here again: the same chat, with the terminal's new part after its own, between notes.
    const again = await client.ok('session.resume', { sessionId: id });
    expect(again.chatId).toBe(chatId);
    expect(kinds()).toEqual([
      'user:first, in the terminal',
      'assistant:Hello from the terminal.',
      'note:Everything above happened in the terminal; the conversation continues here.',
      `note:Back in the terminal from ${new Date(t1).toISOString().replace('T', ' ').slice(0, 16)} UTC:`,
      'user:second, in the terminal',
      'assistant:Still here.',
      'note:The part above happened in the terminal; the conversation continues here.',
    ]);
    // Asked again with nothing new: nothing is added twice.
    await client.ok('session.resume', { sessionId: id });
    expect(kinds()).toHaveLength(7);
    // And the chat sends again once the terminal let go.
    expect(await client.request('chat.send', { chatId, text: 'now from the phone' })).toMatchObject({ ok: true });
    const chat = core.session(chatId);
    await until(() => chat.activeTurnId === null && chat.backendRunning, "the chat's turn done, its CLI kept for the next", 10_000);

    // Taken back to the terminal once more: the chat's idle CLI lets the session go at once.
    await runHookClient('claude', dir, { ...base, hook_event_name: 'SessionStart', source: 'resume' });
    await until(() => status() === 'idle', 'the session live in the terminal', 10_000);
    expect(chat.backendRunning).toBe(false);
  });
});
