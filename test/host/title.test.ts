// Chat titles: the host words a title from a chat's first message when nobody named the chat, and an
// agent's own title for the conversation replaces it; the title is kept with the chat and reaches
// every client in its info.
import { afterEach, describe, expect, it } from 'vitest';
import { SUGGESTED_TITLE_LIMIT, SuggestedTitleSchema } from '../../src/contracts/index.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { titleFromAgent, titleFromMessage } from '../../src/host/chats/title.ts';
import type { ProviderSession } from '../../src/host/providers/provider.ts';
import { TINY_PNG, TestClient, idle, openCore, tempDir } from './harness.ts';
import { RecordingProvider } from './recording-provider.ts';

describe('a title worded from the first message', () => {
  it('takes the first line with words, its markup dropped and its spaces collapsed', () => {
    expect(titleFromMessage('Fix the flaky test')).toBe('Fix the flaky test');
    expect(titleFromMessage('\n\n   \n  Fix   the\tflaky test  \nand then the rest')).toBe('Fix the flaky test');
    expect(titleFromMessage('## Fix the **flaky** `login` test ##')).toBe('Fix the flaky login test');
    expect(titleFromMessage('> - [ ] read [the log](https://example.com/log) and ![a chart](c.png)')).toBe('read the log and a chart');
    expect(titleFromMessage('1. _Why_ does ~~it~~ __this__ fail? <https://ci.example.com/42>')).toBe('Why does it this fail? https://ci.example.com/42');
    expect(titleFromMessage('```ts\nconst answer = 42;\n```')).toBe('const answer = 42;');
    expect(titleFromMessage('---\n***\nRename snake_case_names and 2 * 3 * 4')).toBe('Rename snake_case_names and 2 * 3 * 4');
    expect(titleFromMessage('\\*not emphasis\\* and \\# not a heading')).toBe('*not emphasis* and # not a heading');
    expect(titleFromMessage('#hashtag is a word')).toBe('#hashtag is a word');
  });

  it('cuts a long line after a whole word, with an ellipsis, within the limit', () => {
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    const title = titleFromMessage(words)!;
    expect(title.length).toBeLessThanOrEqual(SUGGESTED_TITLE_LIMIT);
    expect(title.endsWith('…')).toBe(true);
    expect(words.startsWith(title.slice(0, -1))).toBe(true);
    expect(words[title.length - 1], 'the cut falls between words').toBe(' ');
    // One word longer than the limit is cut inside it.
    const long = titleFromMessage('x'.repeat(200))!;
    expect(long).toBe(`${'x'.repeat(SUGGESTED_TITLE_LIMIT - 1)}…`);
    // A cut that falls just before a space keeps its last word.
    const exact = `${'a'.repeat(SUGGESTED_TITLE_LIMIT - 1)} tail`;
    expect(titleFromMessage(exact)).toBe(`${'a'.repeat(SUGGESTED_TITLE_LIMIT - 1)}…`);
    // Trailing punctuation before the cut is not kept in front of the ellipsis.
    expect(titleFromMessage(`${'b'.repeat(60)}, ${'c'.repeat(30)}`)).toBe(`${'b'.repeat(60)}…`);
    // A line exactly at the limit stays whole.
    expect(titleFromMessage('d'.repeat(SUGGESTED_TITLE_LIMIT))).toBe('d'.repeat(SUGGESTED_TITLE_LIMIT));
  });

  it('never cuts inside an emoji or a surrogate pair', () => {
    const family = '👨‍👩‍👧‍👦'; // one grapheme of 11 code units
    for (let pad = 60; pad < 80; pad++) {
      const title = titleFromMessage(`${'y'.repeat(pad)}${family.repeat(3)}`)!;
      expect(title.length).toBeLessThanOrEqual(SUGGESTED_TITLE_LIMIT);
      const body = title.slice(0, -1);
      expect(body.replaceAll(family, '').replaceAll('y', ''), `padding ${pad}`).toBe('');
      expect(() => encodeURIComponent(title), 'no lone surrogate').not.toThrow();
    }
    const astral = '𝒳'.repeat(50); // 2 code units each
    const cut = titleFromMessage(astral)!;
    expect(cut).toBe(`${'𝒳'.repeat(39)}…`);
    expect(() => encodeURIComponent(cut)).not.toThrow();
    expect(titleFromMessage('🚀 Ship it')).toBe('🚀 Ship it');
  });

  it('calls a message of attachments only after its first file, and a message of markup only nothing', () => {
    expect(titleFromMessage('', [{ name: 'build   log.txt' }, { name: 'b.png' }])).toBe('build log.txt');
    expect(titleFromMessage('   \n ', [{ name: `${'n'.repeat(100)}.png` }])).toBe(`${'n'.repeat(79)}…`);
    expect(titleFromMessage('```\n```')).toBeNull();
    expect(titleFromMessage('---', [])).toBeNull();
    expect(titleFromMessage('---', [{ name: 'a.png' }])).toBe('a.png');
  });

  it('makes an agent title fit as plain text, and nothing of a blank one', () => {
    expect(titleFromAgent('  Fix\nthe   flaky test ')).toBe('Fix the flaky test');
    expect(titleFromAgent('   ')).toBeNull();
    expect(titleFromAgent('z'.repeat(81))).toBe(`${'z'.repeat(79)}…`);
  });

  it('answers only what the protocol takes as a suggested title', () => {
    const samples = ['a', 'x'.repeat(500), '👍'.repeat(100), `${'é'.repeat(30)} ${'😀'.repeat(40)}`, '# **bold** [link](u)'];
    for (const sample of samples) expect(SuggestedTitleSchema.safeParse(titleFromMessage(sample)).success, sample).toBe(true);
  });
});

describe('chat titles in the runtime', () => {
  let cleanup: (() => void) | null = null;
  let core: HostCore | null = null;

  afterEach(async () => {
    await core?.close();
    core = null;
    cleanup?.();
    cleanup = null;
  });

  async function open(provider = new RecordingProvider()): Promise<{ core: HostCore; client: TestClient; dir: string }> {
    const temp = tempDir();
    cleanup = temp.cleanup;
    core = await openCore(temp.dir, { providers: [provider] });
    return { core, client: new TestClient(core), dir: temp.dir };
  }

  it('names a chat after its first message, tells every client, keeps it across a restart, and leaves it on later messages', async () => {
    const { core: host, client, dir } = await open();
    const watcher = new TestClient(host);
    await client.ok('chat.create', { chatId: 'c1' });
    expect(watcher.statuses.get('c1')?.suggestedTitle).toBeUndefined();
    await client.attach('c1');
    await client.ok('chat.send', { chatId: 'c1', text: '## Fix the **flaky** test\nin the login suite' });
    expect(host.session('c1').info.suggestedTitle).toBe('Fix the flaky test');
    expect(watcher.statuses.get('c1')?.suggestedTitle, 'chat.status carries it').toBe('Fix the flaky test');
    expect(client.threads.get('c1')?.info.suggestedTitle, 'the info event carries it').toBe('Fix the flaky test');
    await idle(host, 'c1');
    await client.ok('chat.send', { chatId: 'c1', text: 'something else entirely' });
    await idle(host, 'c1');
    expect(host.session('c1').info.suggestedTitle).toBe('Fix the flaky test');

    await host.close();
    core = await openCore(dir, { providers: [new RecordingProvider()] });
    expect(core.session('c1').info.suggestedTitle).toBe('Fix the flaky test');
    const listed = await new TestClient(core).ok('chat.list', {});
    expect(listed.chats.find((c: { chatId: string }) => c.chatId === 'c1').suggestedTitle).toBe('Fix the flaky test');
  });

  it('names a chat of an attachment only after that file', async () => {
    const { core: host, client } = await open();
    await client.ok('chat.create', { chatId: 'c2' });
    await client.ok('chat.send', { chatId: 'c2', text: '', attachments: [{ name: 'screen shot.png', mime: 'image/png', data: TINY_PNG }] });
    expect(host.session('c2').info.suggestedTitle).toBe('screen shot.png');
    await idle(host, 'c2');
  });

  it("takes the agent's own title over the worded one, but a fork keeps the title it was given", async () => {
    const provider = new RecordingProvider();
    const open0 = provider.open.bind(provider);
    // An agent that names the conversation as its turn starts (as Copilot does).
    provider.open = (context): ProviderSession => {
      const session = open0(context);
      const start = session.startTurn.bind(session);
      session.startTurn = (input, emit) => {
        emit({ type: 'title', title: `  Agent's   name for ${input.text.split('\n')[0]!.slice(0, 20)} ` });
        start(input, emit);
      };
      return session;
    };
    const { core: host, client } = await open(provider);
    await client.ok('chat.create', { chatId: 'c3' });
    await client.ok('chat.send', { chatId: 'c3', text: 'hello there' });
    await idle(host, 'c3');
    expect(host.session('c3').info.suggestedTitle).toBe("Agent's name for hello there");
    const turnId = host.session('c3').thread.items.find((i) => i.kind === 'turn')!.id;

    const fork = await client.ok('chat.fork', { chatId: 'c3', turnId, title: 'My fork' });
    expect(fork.info.suggestedTitle).toBe('My fork');
    await client.ok('chat.send', { chatId: fork.info.chatId, text: 'go on' });
    await idle(host, fork.info.chatId);
    expect(host.session(fork.info.chatId).info.suggestedTitle).toBe('My fork');
  });
});
