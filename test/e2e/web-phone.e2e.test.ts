// An open chat on a phone (390×844) and a desktop (1280×800), measured from the layout Chromium drew,
// against the real relay and a real host with the `script` provider: what sits above the thread (the
// way back, the header, the chat's tools) and what sits below it during a turn (the composer with a
// queued message) leave the thread most of the screen; a queued message is listed once; a reply's
// actions sit in one menu; the model is named as people say it.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatChannel, type HostConnection, MemoryOutboxStore, type RelayApi } from '../../src/client/index.ts';
import { screenshot, signedInLobby, signedInPerson, until, type SignedInPerson, type Size } from './browser.ts';
import { HostProcess, userToken } from './peers.ts';

const PERSON = 'phone-reader';
/** The most the header and the chat's tools may take above the thread, in CSS pixels. */
const ABOVE_MAX = 120;
/** The most the composer area may take below the thread while a turn runs, in CSS pixels. */
const BELOW_MAX = 140;

const SCRIPT = {
  model: 'claude-opus-4-8',
  replies: [
    // Held until the test stops it: a turn that runs for as long as the test measures.
    {
      match: '\\bhold',
      steps: [
        { type: 'text', text: 'Working on it.' },
        { type: 'wait', ms: 600_000 },
      ],
    },
    {
      steps: [
        { type: 'text', text: 'You said: {{text}}' },
        { type: 'cost', usd: 0.0009, contextTokens: 800, contextWindow: 200000 },
      ],
    },
  ],
};

const host = new HostProcess(`web-phone-${crypto.randomUUID().slice(0, 6)}`, PERSON);
let api: RelayApi;
let lobby: HostConnection;
const channels: ChatChannel[] = [];
const people: SignedInPerson[] = [];
const detail = () => host.output.slice(-1500);

async function newChat(chatId: string): Promise<ChatChannel> {
  await lobby.request('chat.create', { chatId });
  const channel = new ChatChannel(api, host.hostId, chatId, { outbox: new MemoryOutboxStore() });
  channels.push(channel);
  await until(() => channel.state === 'open' && channel.thread.attached, `the channel of ${chatId} open`, { detail });
  return channel;
}

const settledTurns = (channel: ChatChannel) => channel.thread.items.filter((i) => i.kind === 'turn' && i.state !== 'running').length;

/** The layout as drawn: how far the thread starts from the top and ends from the bottom of the window. */
async function measure(page: Page): Promise<{ above: number; below: number; viewport: number }> {
  return page.evaluate(() => {
    const thread = document.querySelector('.thread')!.getBoundingClientRect();
    return { above: Math.round(thread.top), below: Math.round(window.innerHeight - thread.bottom), viewport: window.innerHeight };
  });
}

beforeAll(async () => {
  await userToken(PERSON);
  writeFileSync(path.join(host.dataDir, 'phone-script.json'), JSON.stringify(SCRIPT));
  writeFileSync(path.join(host.dataDir, 'config.json'), JSON.stringify({ providers: { claude: { backend: 'script', script: 'phone-script.json' } } }));
  await host.start();
  ({ api, lobby } = await signedInLobby(PERSON, host));
});

afterAll(async () => {
  await Promise.all(people.map((p) => p.close()));
  for (const channel of channels) channel.close();
  lobby?.close();
  await host.stop();
});

describe('an open chat leaves the thread the screen', () => {
  it.each(['phone', 'desktop'] as const)(
    'at %s size: header and tools, and the composer during a turn, fit their budgets; a queued message shows once',
    async (size: Size) => {
      const channel = await newChat(`phone-${size}`);
      // One settled exchange first: the reply's actions and the chat's Fork are there to be drawn.
      expect((await channel.send({ text: 'hello there' }).settled).state).toBe('delivered');
      await until(() => settledTurns(channel) === 1, 'the first turn settled', { detail });

      const person = await signedInPerson(size, PERSON, { path: `/hosts/${host.hostId}/chats/${channel.chatId}` });
      people.push(person);
      const { page } = person;
      await page.locator('.thread-row[data-kind="turn"] footer.turn:not(.turn-running)').waitFor();
      await page.locator('.chat-header h1').waitFor();

      const idle = await measure(page);
      console.log(`[${size}] idle: above the thread ${idle.above} px, below it ${idle.below} px of ${idle.viewport}`);
      expect(idle.above, 'header and tools above the thread').toBeLessThanOrEqual(ABOVE_MAX);

      // The model as people say it, in the header.
      expect(await page.locator('.chat-subtitle').textContent()).toContain('Claude Opus 4.8');
      expect(await page.locator('.chat-subtitle').textContent()).not.toContain('claude-opus-4-8');

      // A reply's actions: one menu button at the turn's foot, its choices inside.
      const footer = page.locator('.thread-row[data-kind="turn"] footer.turn').first();
      expect(await footer.getByRole('button').count(), 'one button at the foot of a turn').toBe(1);
      const menuButton = footer.getByRole('button', { name: 'Reply actions' });
      await menuButton.press('Enter');
      const menu = page.getByRole('menu', { name: 'Reply actions' });
      await menu.waitFor();
      const choices = await menu.getByRole('menuitem').allTextContents();
      expect(choices).toContain('Bookmark the reply');
      expect(choices).toContain('Fork from here');
      // The scripted host's folder is no git repository: no "Changes" to offer.
      expect(choices.some((c) => c.startsWith('Changes'))).toBe(false);
      await page.keyboard.press('Escape');
      await expect.poll(() => menu.count()).toBe(0);

      // A turn that runs, and a message written here while it does: queued for after it.
      expect((await channel.send({ text: 'please hold' }).settled).state).toBe('delivered');
      await page.locator('.composer-running').waitFor();
      const box = page.getByRole('combobox', { name: 'Message' });
      await box.fill('and then the next thing');
      await page.getByRole('button', { name: 'Queue' }).click();
      await page.locator('.queued').first().waitFor();
      // The message is listed once (the queue), not also as a "Delivered" line under it.
      await expect.poll(() => page.locator('.composer-area').getByText('and then the next thing').count()).toBe(1);
      await expect.poll(() => page.locator('.send-list').count()).toBe(0);

      const running = await measure(page);
      console.log(`[${size}] during a turn, one queued: above ${running.above} px, below ${running.below} px of ${running.viewport}`);
      await screenshot(page, `phone-budget-${size}`);
      expect(running.above, 'header and tools above the thread during a turn').toBeLessThanOrEqual(ABOVE_MAX);
      expect(running.below, 'composer area below the thread during a turn').toBeLessThanOrEqual(BELOW_MAX);
      // The thread still has most of the screen.
      expect(running.viewport - running.above - running.below).toBeGreaterThan(running.viewport / 2);

      // Stop works from there; the queue is then held (a stopped turn does not start the next by itself).
      await page.getByRole('button', { name: 'Stop' }).click();
      await until(() => settledTurns(channel) === 2, 'the held turn stopped', { detail });
      await expect.poll(() => page.locator('.queue-title').textContent()).toContain('paused');
      expect(await page.locator('.queued').count()).toBe(1);
    },
  );
});
