// A chat's last line (ChatInfo.lastLine), what a chat list row shows of the conversation: it follows
// a person's message as it is accepted and the agent's reply as it completes, reaches every client in
// chat.status, is one line of plain words cut within CHAT_LAST_LINE_LIMIT, survives a restart, goes
// with a clear, and a fork starts from the history it copied.
import { afterEach, describe, expect, it } from 'vitest';
import { CHAT_LAST_LINE_LIMIT, ChatInfoSchema, type ChatItem } from '../../src/contracts/index.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { lastLineIn, lastLineOf } from '../../src/host/chats/last-line.ts';
import { TINY_PNG, TestClient, idle, needsYou, openCore, tempDir } from './harness.ts';

const user = (text: string, extra: Partial<ChatItem> = {}): ChatItem => ({ id: 'u1', kind: 'user', createdAt: 1000, turnId: 't1', text, ...extra }) as ChatItem;
const reply = (text: string, streaming: boolean, extra: Record<string, unknown> = {}): ChatItem =>
  ({ id: 'a1', kind: 'assistant', createdAt: 2000, turnId: 't1', text, streaming, ...extra }) as ChatItem;

describe('the last line an item makes', () => {
  it("is a person's message when it first appears, timed by it, and never again for the same item", () => {
    expect(lastLineOf(user('Fix the flaky test'), undefined, 5000)).toEqual({ role: 'user', text: 'Fix the flaky test', at: 1000 });
    expect(lastLineOf(user('Fix the flaky test'), user('Fix the flaky test'), 5000)).toBeNull();
  });

  it("is the agent's reply when it stops streaming (or arrives whole), timed then; not while it streams, nor a subagent's", () => {
    expect(lastLineOf(reply('Hel', true), undefined, 3000)).toBeNull();
    expect(lastLineOf(reply('Hello there', false), reply('Hel', true), 4000)).toEqual({ role: 'assistant', text: 'Hello there', at: 4000 });
    expect(lastLineOf(reply('Whole at once', false), undefined, 4500)).toEqual({ role: 'assistant', text: 'Whole at once', at: 4500 });
    expect(lastLineOf(reply('Hello there', false), reply('Hello there', false), 5000), 'a finished reply written again').toBeNull();
    expect(lastLineOf(reply('From a subagent', false, { parentToolUseId: 'tool-1' }), reply('From', true, { parentToolUseId: 'tool-1' }), 5000)).toBeNull();
    const note: ChatItem = { id: 'n1', kind: 'note', createdAt: 1, turnId: null, level: 'info', text: 'a note' } as ChatItem;
    expect(lastLineOf(note, undefined, 5000)).toBeNull();
  });

  it('is one line of plain words: whitespace collapsed, markup dropped, nothing of an empty message', () => {
    expect(lastLineOf(user('  first\n\n  second\tline  \r\n third  '), undefined, 0)?.text).toBe('first second line third');
    expect(lastLineOf(reply('## Done\n\n- **All** `42` tests pass\n```sh\nnpm test\n```', false), undefined, 0)?.text).toBe('Done All 42 tests pass npm test');
    expect(lastLineOf(user('   \n\t '), undefined, 0)).toBeNull();
    expect(lastLineOf(reply('', false), reply('', true), 0)).toBeNull();
    // A message of attachments only is shown by its first file.
    expect(lastLineOf(user('', { attachments: [{ name: 'screen   shot.png', mime: 'image/png', data: '' }] } as Partial<ChatItem>), undefined, 0)?.text).toBe(
      'screen shot.png',
    );
  });

  it('is cut within the limit after a whole word, with an ellipsis, never inside a character', () => {
    const words = Array.from({ length: 200 }, (_, i) => `word${i}`).join('\n');
    const line = lastLineOf(reply(words, false), undefined, 0)!.text;
    expect(line.length).toBeLessThanOrEqual(CHAT_LAST_LINE_LIMIT);
    expect(line.length).toBeGreaterThan(CHAT_LAST_LINE_LIMIT - 10);
    expect(line.endsWith('…')).toBe(true);
    expect(words.replaceAll('\n', ' ').startsWith(line.slice(0, -1))).toBe(true);
    expect(line).not.toContain('\n');
    const emoji = lastLineOf(user('👨‍👩‍👧‍👦'.repeat(40)), undefined, 0)!.text;
    expect(emoji.length).toBeLessThanOrEqual(CHAT_LAST_LINE_LIMIT);
    expect(emoji.slice(0, -1).replaceAll('👨‍👩‍👧‍👦', '')).toBe('');
    // One huge line is read once and still cut.
    expect(lastLineOf(user('z'.repeat(100_000)), undefined, 0)!.text).toBe(`${'z'.repeat(CHAT_LAST_LINE_LIMIT - 1)}…`);
  });

  it("of a copied history is its newest message's", () => {
    expect(
      lastLineIn([user('ask'), reply('answer', false), { id: 'n', kind: 'note', createdAt: 3000, turnId: null, level: 'info', text: 'x' } as ChatItem]),
    ).toEqual({ role: 'assistant', text: 'answer', at: 2000 });
    expect(lastLineIn([])).toBeNull();
  });
});

describe('the last line in the runtime', () => {
  let core: HostCore | null = null;
  let cleanup: (() => void) | null = null;

  afterEach(async () => {
    await core?.close();
    core = null;
    cleanup?.();
    cleanup = null;
  });

  /** A host on a fresh data folder, with a client: the folder, to open it again. */
  async function open(): Promise<{ host: HostCore; client: TestClient; dir: string }> {
    const temp = tempDir();
    cleanup = temp.cleanup;
    const host = (core = await openCore(temp.dir));
    return { host, client: new TestClient(host), dir: temp.dir };
  }

  it("follows the person's message, then the agent's reply, in chat.status to every client, and keeps it across a restart", async () => {
    const { host, client, dir } = await open();
    const watcher = new TestClient(host);
    await client.ok('chat.create', { chatId: 'c1' });
    expect(watcher.statuses.get('c1')?.lastLine, 'a new chat has none').toBeUndefined();
    await client.attach('c1');

    const before = Date.now();
    await client.ok('chat.send', { chatId: 'c1', text: 'hi   there\n\nplease' });
    // As the message is accepted the line is the person's (a status that says so was sent).
    const asSent = watcher
      .events('chat.status')
      .map((f) => (f.payload as { info: { lastLine?: unknown } }).info.lastLine)
      .find(Boolean);
    expect(asSent).toMatchObject({ role: 'user', text: 'hi there please' });
    await idle(host, 'c1');
    const info = host.session('c1').info;
    // The scripted default reply streams "Hello there, friend" in deltas; the line is the whole reply.
    expect(info.lastLine).toMatchObject({ role: 'assistant', text: 'Hello there, friend' });
    expect(info.lastLine!.at).toBeGreaterThanOrEqual(before);
    expect(watcher.statuses.get('c1')?.lastLine, 'chat.status carries it').toEqual(info.lastLine);
    expect(client.threads.get('c1')?.info.lastLine, 'the info event carries it').toEqual(info.lastLine);
    expect(ChatInfoSchema.parse(info).lastLine, 'the contract keeps it').toEqual(info.lastLine);

    // A message that asks for an approval: the agent's words before it asks are the line while it waits.
    await client.ok('chat.send', { chatId: 'c1', text: 'please approve this' });
    await needsYou(host, 'c1');
    // The approval script says "I need to list the folder." before it asks; that reply completed.
    expect(host.session('c1').info.lastLine).toMatchObject({ role: 'assistant', text: 'I need to list the folder.' });
    await client.ok('chat.cancel', { chatId: 'c1' });
    await idle(host, 'c1');

    const kept = host.session('c1').info.lastLine;
    await host.close();
    const again = (core = await openCore(dir));
    expect(again.session('c1').info.lastLine, 'kept with the chat').toEqual(kept);
    const listed = await new TestClient(again).ok('chat.list', {});
    expect(listed.chats.find((c: { chatId: string }) => c.chatId === 'c1').lastLine).toEqual(kept);
  });

  it('takes a message of attachments only by its first file, and is gone after a clear', async () => {
    const { host, client } = await open();
    await client.ok('chat.create', { chatId: 'c2' });
    await client.ok('chat.send', { chatId: 'c2', text: '', attachments: [{ name: 'build log.png', mime: 'image/png', data: TINY_PNG }] });
    expect(host.session('c2').info.lastLine).toMatchObject({ role: 'user', text: 'build log.png' });
    await idle(host, 'c2');
    await client.ok('chat.clear', { chatId: 'c2' });
    expect(host.session('c2').info.lastLine).toBeUndefined();
    expect(client.statuses.get('c2')?.lastLine).toBeUndefined();
  });

  it('of a fork is the last line of the history it copied, not the newer one of its source', async () => {
    const { host, client } = await open();
    await client.ok('chat.create', { chatId: 'c3' });
    await client.ok('chat.send', { chatId: 'c3', text: 'hello' });
    await idle(host, 'c3');
    const firstTurn = host.session('c3').thread.items.find((i) => i.kind === 'turn')!.id;
    await client.ok('chat.send', { chatId: 'c3', text: 'show me a visual' });
    await idle(host, 'c3');
    expect(host.session('c3').info.lastLine).toMatchObject({ role: 'assistant', text: 'See above.' });
    const fork = await client.ok('chat.fork', { chatId: 'c3', turnId: firstTurn });
    expect(fork.info.lastLine).toMatchObject({ role: 'assistant', text: 'Hello there, friend' });
  });
});
