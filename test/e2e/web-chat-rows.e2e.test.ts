// The chat list's rows in Chromium at a phone (390×844) and a desktop (1280×800), against the real
// relay and a real host with the `script` provider: each row shows its chat's agent, host, folder
// (shortened, the whole path in its title), when it was last active and its last line (the host's
// ChatInfo.lastLine, cut by the host and ellipsised by the browser); a phone's row never overflows
// sideways; a new message changes the row's last line live; search finds a chat by its folder and
// its last line; the time label moves on as minutes pass (the page's clock, fast-forwarded).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatChannel, MemoryOutboxStore, type HostConnection, type RelayApi } from '../../src/client/index.ts';
import { CHAT_LAST_LINE_LIMIT, type ChatInfo } from '../../src/contracts/index.ts';
import { accessibilityViolations, screenshot, signedInLobby, signedInPerson, until, type SignedInPerson, type Size } from './browser.ts';
import { HostProcess, userToken } from './peers.ts';

const PERSON = 'chat-rows-a';
const SCRIPT = { model: 'scripted', replies: [{ steps: [{ type: 'text', text: 'You said: {{text}}' }] }] };
/** A message longer than a phone row: its reply's last line must be cut by the browser, not overflow. */
const LONG = 'please read every file under the source folder and tell me which of the modules still lack tests, grouped by package, with the worst first';

const host = new HostProcess(`rows-box-${crypto.randomUUID().slice(0, 6)}`, PERSON);
const WORK = path.join(host.dataDir, 'work');
const FOLDER = path.join(WORK, 'projects', 'rows-app');
let api: RelayApi;
let lobby: HostConnection;
const channels: ChatChannel[] = [];
const people: SignedInPerson[] = [];
const detail = () => host.output.slice(-1500);

beforeAll(async () => {
  await userToken(PERSON);
  mkdirSync(FOLDER, { recursive: true });
  writeFileSync(path.join(host.dataDir, 'rows-script.json'), JSON.stringify(SCRIPT));
  writeFileSync(
    path.join(host.dataDir, 'config.json'),
    JSON.stringify({
      policy: { roots: [WORK] },
      providers: { claude: { backend: 'script', script: 'rows-script.json' } },
    }),
  );
  await host.start();
  ({ api, lobby } = await signedInLobby(PERSON, host));
});

afterAll(async () => {
  for (const channel of channels) channel.close();
  lobby?.close();
  await Promise.all([...people.map((p) => p.close()), host.stop()]);
});

/** A chat in FOLDER with one settled exchange (the long message): its channel. */
async function chatWithReply(chatId: string): Promise<ChatChannel> {
  await lobby.request('chat.create', { chatId, cwd: FOLDER });
  const channel = new ChatChannel(api, host.hostId, chatId, { outbox: new MemoryOutboxStore() });
  channels.push(channel);
  await until(() => channel.state === 'open' && channel.thread.attached, `the channel of ${chatId} open`, { detail });
  await say(channel, LONG);
  return channel;
}

/** Sends `text` and waits for the host's info to carry the reply as the chat's last line. */
async function say(channel: ChatChannel, text: string): Promise<ChatInfo> {
  expect((await channel.send({ text }).settled).state).toBe('delivered');
  return until(
    async () => {
      const info = (await api.chats()).find((c) => c.info.chatId === channel.chatId)?.info;
      return info?.lastLine?.role === 'assistant' && info.lastLine.text.startsWith(`You said: ${text.slice(0, 40)}`) ? info : null;
    },
    `the index's last line for "${text.slice(0, 30)}"`,
    { detail },
  );
}

const rowOf = (page: Page, chatId: string): Locator => page.locator(`a.chat-row[href$="/chats/${chatId}"]`);

/** The row's own width and its content's, whether its last line is cut (drawn narrower than its text), and whether its folder is not. */
async function widths(row: Locator) {
  return row.evaluate((el) => {
    const line = el.querySelector('.chat-row-line')!;
    // A part as wide as it is when nothing constrains it, beside the box it is drawn in (fractions
    // count: a box a fraction of a pixel short is drawn with an ellipsis).
    const whole = (selector: string): boolean => {
      const part = el.querySelector(selector)!;
      const free = part.cloneNode(true) as HTMLElement;
      free.style.cssText = 'position: absolute; visibility: hidden; max-width: none; width: auto';
      part.parentElement!.appendChild(free);
      const natural = free.getBoundingClientRect().width;
      free.remove();
      return natural <= part.getBoundingClientRect().width + 0.01;
    };
    return {
      scroll: el.scrollWidth,
      client: el.clientWidth,
      lineCut: line.scrollWidth > line.clientWidth,
      folderWhole: whole('.chat-row-folder'),
      hostWhole: whole('.chat-row-host'),
      page: document.documentElement.scrollWidth,
      window: window.innerWidth,
    };
  });
}

describe.each<Size>(['phone', 'desktop'])('on a %s', (size) => {
  it('each row shows agent, host, folder, last activity and last line, fits the width, and follows a new message live', async () => {
    const channel = await chatWithReply(`rows-${size}-${crypto.randomUUID().slice(0, 6)}`);
    const info = (await api.chats()).find((c) => c.info.chatId === channel.chatId)!.info;
    const line = info.lastLine!;
    expect(line.text.length, 'the host cut the reply').toBeLessThanOrEqual(CHAT_LAST_LINE_LIMIT);

    const person = await signedInPerson(size, PERSON, { path: '/' });
    people.push(person);
    const { page } = person;
    const row = rowOf(page, channel.chatId);
    await row.waitFor();
    expect(await row.locator('.chat-row-agent').textContent()).toBe('with Claude Code (scripted)');
    expect(await row.locator('.chat-row-host').textContent()).toBe(`on ${host.name}`);
    const folder = row.locator('.chat-row-folder');
    expect(await folder.textContent()).toBe('in projects/rows-app');
    expect(await folder.getAttribute('title')).toBe(FOLDER);
    // What a screen reader hears of the row: its parts in words (the icons say nothing).
    expect(await row.ariaSnapshot()).toContain(`in projects/rows-app with Claude Code (scripted) on ${host.name}`);
    const time = row.locator('time');
    expect(await time.getAttribute('datetime')).toBe(new Date(line.at).toISOString());
    expect(await time.textContent()).toMatch(/^(just now|\d+ min ago)$/);
    // The whole line the host sent is on the page; the browser cuts what does not fit.
    expect(await row.locator('.chat-row-line').textContent()).toBe(`Replied: ${line.text}`);

    const drawn = await widths(row);
    expect(drawn.scroll, 'nothing in the row is wider than the row').toBeLessThanOrEqual(drawn.client);
    expect(drawn.page, 'nothing on the page is wider than the window').toBeLessThanOrEqual(drawn.window);
    if (size === 'phone') expect(drawn.lineCut, 'a long last line is ellipsised on a phone').toBe(true);
    // The folder and the host are shown whole even in a narrow row (the host goes to the next line).
    expect(drawn.folderWhole, 'the folder is not cut').toBe(true);
    expect(drawn.hostWhole, "the host's name is not cut").toBe(true);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, `chat-rows-${size}`);

    // A new message: the row's last line and time follow it, as the host's chat.status arrives.
    const next = await say(channel, `second message on the ${size}`);
    await expect.poll(() => row.locator('.chat-row-line').textContent(), { timeout: 20_000 }).toBe(`Replied: You said: second message on the ${size}`);
    expect(await time.getAttribute('datetime')).toBe(new Date(next.lastLine!.at).toISOString());
    // It is the most recently active chat: first in the list (nothing needs the person).
    expect(await page.locator('a.chat-row').first().getAttribute('href')).toBe(await row.getAttribute('href'));

    // Search reaches the folder and the last line, not only the title.
    const search = page.getByRole('searchbox', { name: 'Search chats by title, folder or last message' });
    const rows = page.locator('a.chat-row');
    await search.fill('ROWS-APP');
    await expect.poll(() => row.count()).toBe(1);
    await search.fill(`second ${size}`);
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().getAttribute('href')).toBe(await row.getAttribute('href'));
    await search.fill(`second ${size} nowhere-at-all`);
    await page.getByText('No chat has that in its title, folder or last message.').waitFor();
    await search.fill('');
    expect(person.errors).toEqual([]);
  });
});

describe('the time a row shows', () => {
  it('moves on as minutes pass, with no new event from the host', async () => {
    const channel = await chatWithReply(`rows-clock-${crypto.randomUUID().slice(0, 6)}`);
    const person = await signedInPerson('phone', PERSON, { path: '/settings' });
    people.push(person);
    const { page } = person;
    // The page's own clock, from now on under the test's hand (timers and Date alike).
    await page.clock.install();
    await page.goto('/');
    const time = rowOf(page, channel.chatId).locator('time');
    await expect.poll(() => time.textContent()).toBe('just now');
    await page.clock.fastForward('05:00');
    // Five minutes on, less the seconds between the reply and the clock's install.
    await expect.poll(() => time.textContent()).toMatch(/^[45] min ago$/);
    await page.clock.fastForward('01:00:00');
    // (An hour on is the day after when the test runs just before midnight.)
    await expect.poll(() => time.textContent()).toMatch(/^(1 h ago|yesterday)$/);
  });
});
