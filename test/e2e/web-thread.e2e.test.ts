// The thread view in a real browser, against the real relay and a real host with the `script`
// provider: a reply streams in (grows, ends complete, never twice), every kind it can make draws as it
// should (tool calls folded with their output and diff, thinking folded, markdown with code and its
// HTML shown as text, turn footers with cost and duration, notes, compaction), a person at the end
// stays there through a turn (though the composer grows while it runs), a long chat loads its
// older pages as the person scrolls up without moving what they read, a stream never yanks a person
// who scrolled up, and every fold toggle is a labelled button reached by Tab. Phone and desktop.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatChannel, type HostConnection, MemoryOutboxStore, type RelayApi } from '../../src/client/index.ts';
import { screenshot, signedInLobby, signedInPerson, type SignedInPerson, type Size } from './browser.ts';
import { until as poll, type NotYet } from '../support/until.ts';
import { HostProcess, userToken } from './peers.ts';

const PERSON = 'thread-reader';
const STREAMED = Array.from({ length: 90 }, (_, i) => `w${i}`).join(' ');
const MARKDOWN = [
  '## Plan',
  '',
  '1. Read **the file**',
  '2. Fix `answer`',
  '',
  '```ts',
  'export const answer = 42;',
  '```',
  '',
  'Raw HTML stays text: <img src=x onerror="window.__pwned=1"> and [a link](https://example.com/docs).',
].join('\n');
/** Replies of "many": 60 steps of text and a tool call each, so two of them make three history pages. */
const MANY_STEPS = Array.from({ length: 60 }, (_, i) => [
  { type: 'text', text: `Step ${i} of the long job.` },
  { type: 'tool', name: 'Bash', input: { command: `echo ${i}` }, output: `${i}\n` },
]).flat();

const SCRIPT = {
  replies: [
    {
      match: '\\bstream',
      steps: [
        { type: 'text', text: STREAMED, deltas: 90, delayMs: 25 },
        { type: 'cost', usd: 0.0021 },
      ],
    },
    {
      match: '\\btool',
      steps: [
        { type: 'text', text: 'Let me look at the file and fix it.', deltas: 2, delayMs: 10 },
        { type: 'tool', name: 'Read', input: { file_path: 'src/app.ts' }, output: 'export const answer = 41;\n', delayMs: 10 },
        {
          type: 'tool',
          name: 'Edit',
          input: { file_path: 'src/app.ts', old_string: '41', new_string: '42' },
          output: 'Updated src/app.ts',
          delayMs: 10,
          changes: [{ path: 'src/app.ts', kind: 'update', diff: '@@ -1 +1 @@\n-export const answer = 41;\n+export const answer = 42;\n' }],
        },
        { type: 'cost', usd: 0.0031, contextTokens: 2400, contextWindow: 200000 },
      ],
    },
    {
      match: '\\bmarkdown',
      steps: [
        { type: 'text', text: MARKDOWN, deltas: 4, delayMs: 10 },
        { type: 'cost', usd: 0.0012 },
      ],
    },
    {
      match: '\\bfail',
      steps: [
        { type: 'text', text: 'Trying…' },
        { type: 'fail', message: 'The scripted backend failed on purpose.' },
      ],
    },
    { match: '\\bmany', steps: [...MANY_STEPS, { type: 'cost', usd: 0.01 }] },
    {
      steps: [
        { type: 'thinking', text: 'A plain message; I will answer it briefly.', deltas: 2, delayMs: 10 },
        { type: 'text', text: 'You said: {{text}}', deltas: 2, delayMs: 10 },
        { type: 'cost', usd: 0.0009, contextTokens: 800, contextWindow: 200000 },
      ],
    },
  ],
};

const host = new HostProcess(`web-thread-${crypto.randomUUID().slice(0, 6)}`, PERSON);
let api: RelayApi;
let lobby: HostConnection;
const channels: ChatChannel[] = [];
const people: SignedInPerson[] = [];

const until = <T>(check: () => T | NotYet | Promise<T | NotYet>, what: string, ms = 20_000): Promise<T> =>
  poll(check, what, { ms, every: 25, detail: () => host.output.slice(-1500) });

/** A chat made through the lobby, with a Node-side channel that sends into it (the page only reads). */
async function newChat(chatId: string): Promise<ChatChannel> {
  await lobby.request('chat.create', { chatId });
  const channel = new ChatChannel(api, host.hostId, chatId, { outbox: new MemoryOutboxStore() });
  channels.push(channel);
  await until(() => channel.state === 'open' && channel.thread.attached, `the channel of ${chatId} open`);
  return channel;
}

const settledTurns = (channel: ChatChannel) => channel.thread.items.filter((i) => i.kind === 'turn' && i.state !== 'running').length;

/**
 * Sends and waits for its turn to settle; given a page, until the page has drawn the turn's end too:
 * the page is a client of its own and draws the events when they reach it, not when this one has them.
 */
async function exchange(channel: ChatChannel, text: string, page?: Page): Promise<void> {
  const before = settledTurns(channel);
  expect((await channel.send({ text }).settled).state).toBe('delivered');
  await until(() => settledTurns(channel) > before, `the turn of "${text}" settled`);
  const turn = channel.thread.items.findLast((i) => i.kind === 'turn' && i.state !== 'running')!;
  if (page) await page.locator(`.thread-row[data-row="t:${turn.id}"] footer.turn:not(.turn-running)`).waitFor();
}

async function openChat(size: Size, chatId: string): Promise<{ person: SignedInPerson; page: Page }> {
  const person = await signedInPerson(size, PERSON, { path: `/hosts/${host.hostId}/chats/${chatId}` });
  people.push(person);
  await person.page.locator('.thread-scroll').waitFor();
  return { person, page: person.page };
}

const rows = (page: Page, kind: string) => page.locator(`.thread-row[data-kind="${kind}"]`);

/** How far the thread's view is above its end, in pixels. */
const distanceFromEnd = (page: Page) => page.locator('.thread-scroll').evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);

/** Back to the newest rows the way a person does after reading further up (a click scrolls the row it hits into view). */
async function toNewest(page: Page): Promise<void> {
  // The button goes away by itself once the view reaches the end (a stream may get there first), so it
  // is clicked in the page only if it is still there, rather than waited for.
  await page.evaluate(() => document.querySelector<HTMLButtonElement>('.jump-to-end')?.click());
  await expect.poll(() => page.locator('.jump-to-end').count(), { timeout: 10_000 }).toBe(0);
}

beforeAll(async () => {
  await userToken(PERSON);
  writeFileSync(path.join(host.dataDir, 'thread-script.json'), JSON.stringify(SCRIPT));
  writeFileSync(path.join(host.dataDir, 'config.json'), JSON.stringify({ providers: { claude: { backend: 'script', script: 'thread-script.json' } } }));
  await host.start();
  ({ api, lobby } = await signedInLobby(PERSON, host));
});

afterAll(async () => {
  await Promise.all(people.map((p) => p.close()));
  for (const channel of channels) channel.close();
  lobby?.close();
  await host.stop();
});

describe('the thread view', () => {
  it.each(['desktop', 'phone'] as const)('at %s size: a reply streams in, and every kind it can make draws as it should', async (size) => {
    const channel = await newChat(`thread-kinds-${size}`);
    const { person, page } = await openChat(size, channel.chatId);
    await expect.poll(() => page.locator('.thread-edge').textContent(), { timeout: 20_000 }).toContain('No messages yet');

    // Streaming: sample the reply on every frame; it only grows, ends whole, and is never drawn twice.
    // A frame's sample runs before the thread's own frame callback (it asked for the frame first), so
    // it sees the page as the previous frame left it: the last draw (the reply's end with its turn's
    // footer, often one frame) is sampled once more when the footer shows, as the page then is.
    await page.evaluate(() => {
      const w = window as unknown as { samples: number[][]; sample(): void; sampling: boolean };
      w.samples = [];
      w.sampling = true;
      w.sample = () => {
        const drawn = [...document.querySelectorAll('.thread-row[data-kind="assistant"] .markdown')]
          .filter((el) => el.textContent!.startsWith('w0 '))
          .map((el) => el.textContent!.trim().length);
        if (drawn.length) w.samples.push(drawn);
      };
      const tick = () => {
        w.sample();
        if (w.sampling) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    await exchange(channel, 'please stream a reply', page);
    const samples = await page.evaluate(() => {
      const w = window as unknown as { samples: number[][]; sample(): void; sampling: boolean };
      w.sampling = false;
      w.sample();
      return w.samples;
    });
    expect(await page.locator('.thread-row[data-kind="turn"]').count()).toBe(1);
    expect(
      samples.every((drawn) => drawn.length === 1),
      'the reply is drawn once',
    ).toBe(true);
    const lengths = samples.map((drawn) => drawn[0]!);
    expect(
      lengths.every((n, i) => i === 0 || n >= lengths[i - 1]!),
      'the reply only grows',
    ).toBe(true);
    expect(new Set(lengths).size, 'the reply was seen growing').toBeGreaterThan(3);
    expect(lengths.at(-1)).toBe(STREAMED.length);
    await expect.poll(async () => (await rows(page, 'assistant').last().locator('.markdown').textContent())?.trim()).toBe(STREAMED);
    expect(await page.locator('.msg-assistant.streaming').count()).toBe(0);

    // A tool call: folded to one line; open, its output and its change as a diff.
    await exchange(channel, 'use a tool', page);
    const read = rows(page, 'tool').filter({ hasText: 'Read' }).locator('.fold-toggle');
    await expect.poll(() => read.getAttribute('aria-expanded')).toBe('false');
    expect(await page.getByText('export const answer = 41;').count()).toBe(0);
    // Its turn's footer: done, its cost and duration.
    const toolTurn = rows(page, 'turn').last();
    expect(await toolTurn.locator('.turn-state').textContent()).toBe('Done');
    expect(await toolTurn.locator('.turn-cost').textContent()).toBe('$0.0031');
    expect(await toolTurn.locator('.turn-duration').textContent()).toMatch(/^\d+(\.\d)? (ms|s)$/);
    // Fold toggles are opened from the keyboard: a pointer click can land on the floating "newest" button.
    await read.press('Enter');
    await expect.poll(() => read.getAttribute('aria-expanded')).toBe('true');
    await page.getByText('export const answer = 41;').first().waitFor();
    const edit = rows(page, 'tool').filter({ hasText: 'Edit' });
    await edit.locator('.fold-toggle').press('Enter');
    expect(await edit.locator('.diff-add').first().textContent()).toBe('+export const answer = 42;\n');
    expect(await edit.locator('.diff-del').first().textContent()).toBe('-export const answer = 41;\n');

    // Thinking, folded.
    await exchange(channel, 'hello there', page);
    await toNewest(page);
    const thought = rows(page, 'thinking').last().locator('.fold-toggle');
    await expect.poll(() => thought.getAttribute('aria-expanded')).toBe('false');
    expect(await thought.textContent()).toMatch(/Thought for/);
    expect(await page.getByText('A plain message; I will answer it briefly.').count()).toBe(0);
    await thought.press('Enter');
    await page.getByText('A plain message; I will answer it briefly.').waitFor();

    // A person at the end stays there when the view gets shorter from below and a scroll event (the
    // view following a new row, say) is handled before the ResizeObserver has run: the order a loaded
    // machine gives when a turn starts as its first row lands. The scroll handler then measures a view
    // that shrank under a person who did not move.
    await toNewest(page);
    await page.evaluate(() => {
      document.querySelector<HTMLElement>('.composer')!.style.paddingBottom = '120px';
      document.querySelector('.thread-scroll')!.dispatchEvent(new Event('scroll'));
    });
    await exchange(channel, 'hello after the view shrank', page);
    await expect.poll(() => distanceFromEnd(page), { timeout: 5_000 }).toBeLessThanOrEqual(40);
    expect(await page.locator('.jump-to-end').count()).toBe(0);
    await page.evaluate(() => {
      document.querySelector<HTMLElement>('.composer')!.style.paddingBottom = '';
    });

    // A person at the end stays there through a turn: the view gets shorter from below while it runs
    // (on a phone the composer grows by a line or two), and still the reply shows without a button.
    await toNewest(page);
    await exchange(channel, 'markdown please', page);
    await expect.poll(() => distanceFromEnd(page), { timeout: 5_000 }).toBeLessThanOrEqual(40);
    expect(await page.locator('.jump-to-end').count()).toBe(0);

    // Markdown: a heading, a list, a code block with its language, a link that opens apart; HTML as text.
    const md = rows(page, 'assistant').last().locator('.markdown');
    await md.locator('h2', { hasText: 'Plan' }).waitFor();
    expect(await md.locator('ol > li').count()).toBe(2);
    expect(await md.locator('.code-block code.language-ts').textContent()).toBe('export const answer = 42;');
    expect(await md.locator('.code-block .code-lang').textContent()).toBe('ts');
    expect(await md.locator('button.code-copy').getAttribute('aria-label')).toBe('Copy code');
    expect(await md.textContent()).toContain('<img src=x onerror="window.__pwned=1">');
    expect(await page.locator('.thread img').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    const link = md.locator('a', { hasText: 'a link' });
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(await link.getAttribute('rel')).toContain('noopener');

    // A failed turn: an error note and a footer that says so.
    await exchange(channel, 'now fail', page);
    await toNewest(page);
    await page.locator('.thread-row[data-kind="note"] .note-error', { hasText: 'The scripted backend failed on purpose.' }).waitFor();
    await expect.poll(() => rows(page, 'turn').last().locator('.turn-state').textContent()).toBe('Failed');

    // The header: the chat's cost and context.
    await expect.poll(() => page.locator('.chat-cost').textContent()).toBe(`$${(0.0021 + 0.0031 + 0.0009 + 0.0009 + 0.0012).toFixed(4)}`);
    expect(await page.locator('.context-meter meter').getAttribute('max')).toBe('200000');

    // Compaction: a marker in the thread, at the end where the person is.
    await channel.request('chat.compact', { chatId: channel.chatId });
    await rows(page, 'compaction').first().waitFor({ timeout: 20_000 });
    await expect.poll(() => rows(page, 'turn').last().locator('.turn-state').textContent()).toBe('Compact: Done');

    // Keyboard: every fold toggle is a labelled button, reached by Tab and opened by Enter.
    // Read in one go: rows come and go as the list moves, so a toggle found first may be gone after.
    const toggles = await page
      .locator('.thread .fold-toggle')
      .evaluateAll((els) => els.map((el) => ({ tag: el.tagName, label: el.getAttribute('aria-label') ?? '' })));
    expect(toggles.length).toBeGreaterThan(0);
    for (const toggle of toggles) {
      expect(toggle.tag).toBe('BUTTON');
      expect(toggle.label.length).toBeGreaterThan(3);
    }
    await page.locator('.thread-scroll').focus();
    const reached = await until(
      async () => {
        await page.keyboard.press('Tab');
        return page.evaluate(() => {
          const el = document.activeElement as HTMLElement | null;
          return el?.classList.contains('fold-toggle') ? { label: el.getAttribute('aria-label'), open: el.getAttribute('aria-expanded') } : null;
        });
      },
      'Tab reaching a fold toggle',
      10_000,
    );
    expect(reached.label).toBeTruthy();
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-expanded'))).toBe(reached.open === 'true' ? 'false' : 'true');

    await screenshot(page, `thread-kinds-${size}`);
    expect(person.errors).toEqual([]);
  });

  it('a long chat loads older pages as the person scrolls up, keeps their place, and a stream never yanks them down', async () => {
    const channel = await newChat('thread-long');
    await exchange(channel, 'many steps, first');
    await exchange(channel, 'many steps, second');
    expect(channel.thread.items.length, 'the chat is longer than two pages').toBeGreaterThan(200);
    const { person, page } = await openChat('desktop', channel.chatId);
    const scroller = page.locator('.thread-scroll');
    await until(() => page.locator('.thread-row').count(), 'rows drawn');
    expect(await page.locator('.thread-edge').textContent()).not.toContain('Start of the chat');
    // It opens at the bottom, on the newest turn.
    await expect.poll(() => scroller.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight)).toBeLessThan(41);

    // Up to the top: older pages come, and the row on screen when a page lands above stays where it was.
    let steady = 0;
    for (let pages = 0; pages < 20; pages++) {
      if (await page.locator('.thread-edge', { hasText: 'Start of the chat' }).count()) break;
      // Scroll into the distance at which older pages load and read a row: it stays where it is when
      // the page lands above it.
      const seen = await scroller.evaluate(async (el) => {
        const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        el.scrollTop = el.clientHeight * 1.5 + 100;
        await frames();
        const top = el.getBoundingClientRect().top;
        const row = [...el.querySelectorAll<HTMLElement>('.thread-row')].find((r) => r.getBoundingClientRect().top >= top);
        if (!row) return null;
        const height = el.scrollHeight;
        el.scrollTop -= 200;
        await new Promise((r) => requestAnimationFrame(r));
        return { key: row.dataset.row!, y: row.getBoundingClientRect().top, height };
      });
      if (!seen) continue;
      const landed = await until(() => scroller.evaluate((el, height) => el.scrollHeight > height || null, seen.height), 'an older page', 5_000).catch(
        () => null,
      );
      if (!landed) continue;
      const y = () =>
        page.evaluate(
          (key) => document.querySelector<HTMLElement>(`.thread-row[data-row="${CSS.escape(key)}"]`)?.getBoundingClientRect().top ?? null,
          seen.key,
        );
      await expect.poll(async () => Math.abs(((await y()) ?? Infinity) - seen.y), { message: 'the row read stays put' }).toBeLessThan(3);
      steady++;
    }
    expect(steady, 'at least one page landed above a row being read').toBeGreaterThan(0);
    await page.locator('.thread-edge', { hasText: 'Start of the chat' }).waitFor();
    await scroller.evaluate((el) => {
      el.scrollTop = 0;
    });
    await rows(page, 'user').filter({ hasText: 'many steps, first' }).waitFor();
    await page.locator('.thread-row[data-kind="assistant"]', { hasText: 'Step 0 of the long job.' }).first().waitFor();

    // A stream while the person reads further up: nothing moves, a button offers the new messages.
    await scroller.evaluate((el) => {
      el.scrollTop = el.scrollHeight / 2;
    });
    const readingAt = await scroller.evaluate((el) => el.scrollTop);
    const before = settledTurns(channel);
    channel.send({ text: 'stream while I read' });
    await until(() => settledTurns(channel) > before, 'the streamed turn settled');
    await page.locator('.jump-to-end.unseen').waitFor();
    expect(Math.abs((await scroller.evaluate((el) => el.scrollTop)) - readingAt)).toBeLessThan(2);
    await page.locator('.jump-to-end').click();
    await expect.poll(() => scroller.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight)).toBeLessThan(41);
    await expect.poll(async () => (await rows(page, 'assistant').last().locator('.markdown').textContent())?.trim()).toBe(STREAMED);
    expect(await page.locator('.jump-to-end').count()).toBe(0);

    // Virtualized: a chat of this length keeps only a screenful of rows in the page.
    expect(await page.locator('.thread-row').count()).toBeLessThan(60);
    await screenshot(page, 'thread-long-desktop');
    expect(person.errors).toEqual([]);
  });
});
