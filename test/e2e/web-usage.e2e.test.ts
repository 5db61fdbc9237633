// The usage page and a chat's limit, in Chromium against the real relay and a real host whose Claude
// Code and Codex accounts are the pinned CLIs on scripted model servers (loopback). Spend and tokens
// by day, model and project come from session files in Claude Code 2.1.197's shape (generated,
// test/support/usage-transcripts.ts, with known tokens so the figures can be checked against the
// host's price table) and from the rollout the real Codex writes during the test; the plan's
// windows are what the real Codex read from its replies' rate-limit headers (a ChatGPT plan's), and
// a Codex turn that hits the limit puts the limit and its reset in the chat's header.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostConnection } from '../../src/client/index.ts';
import type { AnthropicServer } from '../support/anthropic-server.ts';
import { OpenAiServer } from '../support/openai-server.ts';
import { claudeLines, claudeProjectDir, writeLines } from '../support/usage-transcripts.ts';
import { CLAUDE_BIN, startScenario } from '../host/claude-scenario.ts';
import { codexScenario, RESET_AT_SECONDS, TEST_KEY_VARIABLE, TEST_MODEL, writeCodexHome } from '../host/fixtures/codex/scenario.ts';
import { accessibilityViolations, screenshot, signedInLobby, signedInPerson, until, type SignedInPerson, type Size } from './browser.ts';
import { HostProcess, Peer } from './peers.ts';

const OWNER = 'usage-owner';
const root = path.resolve(import.meta.dirname, '../..');
const host = new HostProcess(`web-usage-${crypto.randomUUID().slice(0, 6)}`, OWNER);
const work = mkdtempSync(path.join(tmpdir(), 'tether-usage-work-'));
const alpha = path.join(work, 'alpha');
const beta = path.join(work, 'beta');
const people: SignedInPerson[] = [];
const peers: Peer[] = [];
let claudeModel: AnthropicServer;
let codexModel: OpenAiServer;
let lobby: HostConnection;
let usagePage: Page;
let claudeConfig = '';

const DAY = 86_400_000;
const noonUtc = (daysAgo: number) => {
  const today = new Date();
  return Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()) - daysAgo * DAY + 12 * 3_600_000;
};
const slotOf = (at: number) => new Date(at).toISOString().slice(0, 10);
const TWO_DAYS_AGO = noonUtc(2);
const YESTERDAY = noonUtc(1);

const eventually = <T>(check: () => T | false | null | undefined | Promise<T | false | null | undefined>, what: string, ms = 60_000) =>
  until(check, what, { ms, detail: () => host.output.slice(-2000) });
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 60_000 });

async function open(size: Size, at: string): Promise<Page> {
  const person = await signedInPerson(size, OWNER, { path: at });
  people.push(person);
  return person.page;
}

/** A Codex chat and an SDK client on it that waits for each turn to settle. */
async function codexChat(chatId: string): Promise<(text: string) => Promise<Record<string, any>>> {
  await lobby.request('chat.create', { chatId, provider: 'codex', cwd: work, runtimeMode: 'auto-accept-edits' });
  const peer = await Peer.chat(host.hostId, chatId, OWNER);
  peers.push(peer);
  await peer.socket.request('chat.attach', { chatId });
  return async (text) => {
    const { turnId } = await peer.socket.request('chat.send', { chatId, text });
    return eventually(() => {
      const turn = peer.items().get(turnId as string);
      return turn && turn.state !== 'running' ? turn : null;
    }, `the turn "${text}"`);
  };
}

const row = (page: Page, table: string, attribute: string, value: string) => page.getByRole('table', { name: table }).locator(`tr[${attribute}="${value}"]`);
const cells = async (page: Page, table: string, attribute: string, value: string) =>
  (await row(page, table, attribute, value).locator('th, td').allTextContents()).map((t) => t.trim());

beforeAll(async () => {
  const claude = await startScenario();
  claudeModel = claude.server;
  codexModel = await OpenAiServer.start(codexScenario);
  const codexHome = path.join(host.dataDir, 'codex-home');
  mkdirSync(codexHome, { recursive: true });
  writeCodexHome(codexHome, codexModel.url);
  mkdirSync(alpha, { recursive: true });
  mkdirSync(beta, { recursive: true });
  // Two sessions Claude Code wrote before: one per project, one model each, on two days (noon UTC,
  // the same day in any zone within 11 hours of it). Each call's usage is repeated on its two lines,
  // as the CLI writes a message per content block; the host counts it once.
  const config = (claudeConfig = claude.env.CLAUDE_CONFIG_DIR!);
  writeLines(
    path.join(claudeProjectDir(config, alpha), '11111111-1111-4111-8111-111111111111.jsonl'),
    claudeLines('11111111-1111-4111-8111-111111111111', alpha, {
      at: TWO_DAYS_AGO,
      model: 'claude-sonnet-4-5-20250929',
      messageId: 'msg_alpha',
      input: 1_000_000,
      output: 100_000,
    }),
  );
  writeLines(
    path.join(claudeProjectDir(config, beta), '22222222-2222-4222-8222-222222222222.jsonl'),
    claudeLines('22222222-2222-4222-8222-222222222222', beta, {
      at: YESTERDAY,
      model: 'claude-haiku-4-5-20251001',
      messageId: 'msg_beta',
      input: 2_000_000,
      output: 200_000,
    }),
  );
  writeFileSync(
    path.join(host.dataDir, 'config.json'),
    JSON.stringify({
      providers: {
        claude: { backend: 'claude', command: CLAUDE_BIN, env: claude.env },
        codex: { backend: 'codex', command: path.join(root, 'node_modules', '.bin', 'codex'), home: codexHome, env: { [TEST_KEY_VARIABLE]: 'test-key' } },
      },
      policy: { roots: [work] },
    }),
  );
  await host.start();
  ({ lobby } = await signedInLobby(OWNER, host));
}, 60_000);

afterAll(async () => {
  await Promise.all(people.map((p) => p.close()));
  for (const peer of peers) peer.close();
  lobby?.close();
  await host.stop();
  await claudeModel?.close();
  await codexModel?.close();
});

describe("the usage page and a chat's limit in the browser", { timeout: 180_000 }, () => {
  it("shows the spend and tokens by day, model and project that the CLIs' session files hold, priced from the host's table", async () => {
    usagePage = await open('desktop', '/usage');
    const page = usagePage;
    await page.getByRole('table', { name: 'By day' }).waitFor({ timeout: 60_000 });
    // Sonnet 4.5 at $3 / $15 per million: 1M in + 100k out = $4.50. Haiku 4.5 at $1 / $5: 2M + 200k = $3.00.
    expect(await page.getByTestId('usage-spend').textContent()).toBe('$7.50');
    expect(await page.getByTestId('usage-tokens').textContent()).toBe('3.3M');
    expect(await page.getByTestId('usage-sessions').textContent()).toBe('2');
    expect((await cells(page, 'By day', 'data-slot', slotOf(YESTERDAY))).slice(1)).toEqual(['$3.00', '2.2M']);
    expect((await cells(page, 'By day', 'data-slot', slotOf(TWO_DAYS_AGO))).slice(1)).toEqual(['$4.50', '1.1M']);
    expect((await cells(page, 'By model', 'data-model', 'claude-sonnet-4-5-20250929')).slice(1)).toEqual([
      '$4.50',
      '1.1M1.0M in · 0 cache read · 0 cache write · 100k out',
    ]);
    expect((await cells(page, 'By model', 'data-model', 'claude-haiku-4-5-20251001'))[1]).toBe('$3.00');
    expect(await cells(page, 'By project', 'data-folder', alpha)).toEqual([`alpha${alpha}`, '$4.50', '1.1M']);
    expect(await cells(page, 'By project', 'data-folder', beta)).toEqual([`beta${beta}`, '$3.00', '2.2M']);
    // Where it comes from: the account's folder was read, the prices are the shipped table's.
    await page.getByText('Where these figures come from').click();
    expect(await page.locator('.usage-roots li[data-status="ok"]', { hasText: path.join(claudeConfig, 'projects') }).count()).toBe(1);
    expect(await page.locator('.usage-pricing').textContent()).toContain('the table the host ships');
    // No CLI reported a plan yet, and the page says what would.
    expect(await page.getByRole('region', { name: 'What is left on your plan' }).textContent()).toContain('No CLI on this host has reported a plan limit yet');
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'usage-desktop');
  });

  it("follows the host while open: the plan's windows Codex read arrive by themselves, and so does its new session's usage", async () => {
    const page = usagePage;
    const turn = await codexChat('usage-codex');
    expect(await turn('check my plan')).toMatchObject({ state: 'done' });
    // usage.limitsChanged, with the page untouched.
    const primary = page.locator('.plan[data-provider="codex"] .plan-window[data-window="codex.primary"]');
    await primary.waitFor({ timeout: 60_000 });
    expect(await primary.locator('.plan-window-label').textContent()).toBe('5-hour limit');
    expect(await primary.locator('.plan-window-left').textContent()).toBe('58% left (42% used)');
    expect(await primary.locator('.plan-window-reset').textContent()).toMatch(/^Resets (Jan 1, 2100|Dec 31, 2099)/);
    expect(await page.locator('.plan-window[data-window="codex.secondary"] .plan-window-left').textContent()).toBe('93% left (7% used)');
    expect(await page.locator('.plan[data-provider="codex"] .plan-checked').textContent()).toMatch(/^Reported by the CLI (just now|1 min ago)$/);

    // usage.changed: another client's read finds the rollout Codex wrote; this page reads its period again.
    expect(await page.locator(`tr[data-model="${TEST_MODEL}"]`).count()).toBe(0);
    const other = await lobby.request('usage.summary', { from: slotOf(Date.now()), to: slotOf(Date.now()), resolution: 'day', timeZone: 'UTC' });
    expect(other.models.map((m) => m.model)).toContain(TEST_MODEL);
    const codexRow = row(page, 'By model', 'data-model', TEST_MODEL);
    await codexRow.waitFor({ timeout: 60_000 });
    // The test model has no price: unknown, not free, and the totals say those tokens went uncounted.
    expect((await codexRow.locator('td').first().textContent())?.trim()).toBe('price unknown');
    await poll(() => page.getByTestId('usage-sessions').textContent()).toBe('3');
    expect(await page.locator('.usage-unpriced').textContent()).toContain('tokens were used by models without a price');
    // The period's spend is now a floor, and the folder Codex worked in, all on that model, is not "$0".
    expect(await page.getByTestId('usage-spend').textContent()).toBe('at least $7.50');
    const workRow = row(page, 'By project', 'data-folder', work);
    await workRow.waitFor({ timeout: 60_000 });
    expect((await workRow.locator('td').first().textContent())?.trim()).toBe('price unknown');
    expect(await cells(page, 'By project', 'data-folder', alpha)).toEqual([`alpha${alpha}`, '$4.50', '1.1M']);
    await screenshot(page, 'usage-plan-desktop');
  });

  it('"Check again" asks Codex again: an API-key account has no plan to read, which it says, and the last windows stay', async () => {
    const page = usagePage;
    await page.getByRole('button', { name: 'Check again' }).click();
    const note = page.locator('.plan[data-provider="codex"] .plan-unavailable');
    await note.waitFor({ timeout: 60_000 });
    expect(await note.textContent()).toContain('This account has no plan with limits to read');
    expect(await note.textContent()).toContain('The windows above are the last the CLI reported.');
    expect(await page.locator('.plan[data-provider="codex"] .plan-checked').textContent()).toMatch(/^Asked /);
    expect(await page.locator('.plan-window[data-window="codex.primary"] .plan-window-left').textContent()).toBe('58% left (42% used)');
  });

  it("a Codex turn that hits the limit names it and its reset in the chat's header, and the plan shows the window used up", async () => {
    await lobby.request('chat.create', { chatId: 'usage-limit', provider: 'codex', cwd: work, runtimeMode: 'auto-accept-edits' });
    const chat = await open('phone', `/hosts/${host.hostId}/chats/usage-limit`);
    await chat.locator('.composer').waitFor();
    await chat.getByRole('combobox', { name: 'Message' }).fill('hit the limit');
    await chat.getByRole('button', { name: 'Send' }).click();
    const limit = chat.locator('.chat-header .chat-limit');
    await limit.waitFor({ timeout: 90_000 });
    expect(await limit.getAttribute('data-resets-at')).toBe(String(RESET_AT_SECONDS * 1000));
    expect(await limit.textContent()).toMatch(/^Stopped on the usage limit; resets (Jan 1, 2100|Dec 31, 2099)/);
    await screenshot(chat, 'usage-limit-header-phone');
    // The usage page, still open, heard the window fill (usage.limitsChanged).
    await poll(() => usagePage.locator('.plan-window[data-window="codex.primary"] .plan-window-left').textContent()).toBe('0% left (100% used)');
  });
});
