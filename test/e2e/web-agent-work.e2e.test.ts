// What a chat's CLI does beside its replies, in Chromium against the real relay, a real host and the
// real `claude` (pinned) answered by the scripted Anthropic server on loopback
// (test/host/claude-scenario.ts): a command Claude Code keeps running in the background is listed
// in the chat with a Stop that really stops it; a subagent's full work is read from the CLI's own
// transcript on request, and a running one's Stop stops it; a turn that stops on the usage limit says so in the chat's header; `$` in
// the composer offers the skills Claude Code would load for the chat's folder (the user's, the
// project's and an installed plugin's), with their descriptions, and the one picked travels with the message.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostConnection } from '../../src/client/index.ts';
import type { AnthropicServer } from '../support/anthropic-server.ts';
import { CLAUDE_BIN, claudeHostConfig, startScenario } from '../host/claude-scenario.ts';
import { accessibilityViolations, screenshot, signedInLobby, signedInPerson, until, type SignedInPerson, type Size } from './browser.ts';
import { HostProcess, Peer } from './peers.ts';

const OWNER = 'agent-work-owner';
const host = new HostProcess(`web-agent-work-${crypto.randomUUID().slice(0, 6)}`, OWNER);
const work = mkdtempSync(path.join(tmpdir(), 'tether-agent-work-'));
const people: SignedInPerson[] = [];
const approvers: Peer[] = [];
let model: AnthropicServer;
let config = '';
let lobby: HostConnection;

const eventually = <T>(check: () => T | false | null | undefined | Promise<T | false | null | undefined>, what: string, ms = 60_000) =>
  until(check, what, { ms, detail: () => host.output.slice(-2000) });
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 60_000 });

function skill(dir: string, name: string, description: string): void {
  mkdirSync(path.join(dir, name), { recursive: true });
  writeFileSync(path.join(dir, name, 'SKILL.md'), `---\nname: ${name}\ndescription: ${description}\n---\n\nDo the thing.\n`);
}

/**
 * A chat of the real Claude Code, with an SDK client beside the page that allows every approval it
 * asks (the host runs as root here, where Claude Code asks before a command whatever the mode; the
 * approval cards are another file's subject).
 */
async function newChat(chatId: string): Promise<void> {
  await lobby.request('chat.create', { chatId, provider: 'claude', cwd: work, runtimeMode: 'auto-accept-edits' });
  const approver = await Peer.chat(host.hostId, chatId, OWNER);
  approvers.push(approver);
  const allowed = new Set<string>();
  approver.socket.onFrame((frame: any) => {
    const item = frame?.event === 'chat.event' && frame.payload.event.type === 'item' ? frame.payload.event.item : null;
    if (item?.kind === 'approval' && item.decision === 'pending' && !allowed.has(item.requestId)) {
      allowed.add(item.requestId);
      void approver.socket.request('chat.approve', { chatId, requestId: item.requestId, decision: 'allow' });
    }
  });
  await approver.socket.request('chat.attach', { chatId });
}

async function openChat(size: Size, chatId: string): Promise<Page> {
  const person = await signedInPerson(size, OWNER, { path: `/hosts/${host.hostId}/chats/${chatId}` });
  people.push(person);
  await person.page.locator('.composer').waitFor();
  return person.page;
}

const messageBox = (page: Page) => page.getByRole('combobox', { name: 'Message' });

async function write(page: Page, text: string): Promise<void> {
  await messageBox(page).fill(text);
  await page.getByRole('button', { name: /^(Send|Queue|Steer)$/ }).click();
}

/** The turns that ended, as the page draws them (their footers). */
const settledTurns = (page: Page) => page.locator('footer.turn:not(.turn-running)');

beforeAll(async () => {
  const scenario = await startScenario();
  model = scenario.server;
  config = scenario.env.CLAUDE_CONFIG_DIR!;
  skill(path.join(config, 'skills'), 'release-notes', 'Write the release notes from the merged changes');
  skill(path.join(work, '.claude', 'skills'), 'deploy-check', 'Check the deploy before it goes out');
  // A plugin from a local marketplace, added and installed with the real CLI's own commands (offline).
  const market = path.join(path.dirname(config), 'market');
  mkdirSync(path.join(market, '.claude-plugin'), { recursive: true });
  writeFileSync(
    path.join(market, '.claude-plugin', 'marketplace.json'),
    JSON.stringify({ name: 'local-market', owner: { name: 'Test' }, plugins: [{ name: 'tools', source: './plugins/tools', description: 'Test tools' }] }),
  );
  mkdirSync(path.join(market, 'plugins', 'tools', '.claude-plugin'), { recursive: true });
  writeFileSync(
    path.join(market, 'plugins', 'tools', '.claude-plugin', 'plugin.json'),
    JSON.stringify({ name: 'tools', version: '1.0.0', description: 'Test tools' }),
  );
  skill(path.join(market, 'plugins', 'tools', 'skills'), 'lint-fix', 'Fix the lint errors');
  const cli = (...args: string[]) => execFileSync(CLAUDE_BIN, args, { cwd: path.dirname(config), env: { ...process.env, ...scenario.env }, stdio: 'ignore' });
  cli('plugin', 'marketplace', 'add', market);
  cli('plugin', 'install', 'tools@local-market');
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: work });
  writeFileSync(path.join(host.dataDir, 'config.json'), JSON.stringify(claudeHostConfig(scenario.env, work)));
  await host.start();
  ({ lobby } = await signedInLobby(OWNER, host));
}, 60_000);

afterAll(async () => {
  await Promise.all(people.map((p) => p.close()));
  for (const peer of approvers) peer.close();
  lobby?.close();
  await host.stop();
  await model?.close();
});

describe("a chat's background work, subagents, limit and skills in the browser", { timeout: 180_000 }, () => {
  it('lists the command Claude Code keeps running in the background, and its Stop stops it in the CLI', async () => {
    await newChat('work-background');
    const page = await openChat('phone', 'work-background');
    await write(page, 'KW-BACKGROUND');
    const panel = page.getByRole('region', { name: 'Running in the background' });
    await panel.waitFor({ timeout: 90_000 });
    await poll(() => panel.getByRole('heading').textContent()).toBe('Running in the background (1)');
    const row = panel.locator('.background-task');
    await poll(() => row.locator('.background-kind').textContent()).toBe('Shell');
    await poll(() => row.locator('.background-description').textContent()).toBe('Wait in the background');
    await poll(() => row.locator('.background-command').textContent()).toBe('sleep 300');
    // The task outlived its turn: the turn is over while the command still runs.
    await poll(() => settledTurns(page).count()).toBe(1);
    expect(await accessibilityViolations(page, { exclude: ['.thread', '.composer-area'] })).toEqual([]);
    await screenshot(page, 'agent-work-background-phone');

    const taskId = await row.getAttribute('data-task-id');
    expect(taskId).toBeTruthy();
    expect(lobby.statuses.get('work-background')?.background?.map((t) => t.id)).toEqual([taskId]);
    await panel.getByRole('button', { name: 'Stop Wait in the background' }).click();
    // Gone once Claude Code itself reported the task stopped (its task_notification), not when asked.
    await panel.waitFor({ state: 'detached', timeout: 60_000 });
    await eventually(() => lobby.statuses.get('work-background')?.background === undefined, 'the host says nothing runs');
  });

  it("opens a subagent's full work from Claude Code's transcript of it: its own command and its report", async () => {
    await newChat('work-subagent');
    const page = await openChat('desktop', 'work-subagent');
    await write(page, 'KW-TASK');
    const row = page.locator('.thread-row[data-kind="subagent"]');
    await row.waitFor({ timeout: 90_000 });
    await poll(() => row.locator('.tool-state').first().getAttribute('class')).toContain('state-done');
    await row.getByRole('button', { name: /Find files .*show its work/ }).click();
    const full = row.locator('.subagent-full');
    await full.getByRole('button', { name: 'Show its full work' }).click();
    await full.locator('[data-loaded="true"], .subagent-source').first().waitFor();
    // Claude Code can write the subagent's last line (its report) after the turn's result: read again
    // until the transcript holds it, as a person pressing "Read it again" a moment later would.
    await poll(async () => {
      if (!(await full.textContent())?.includes('Subagent report: found 3 files.')) await full.getByRole('button', { name: 'Read it again' }).click();
      return full.textContent();
    }).toContain('Subagent report: found 3 files.');
    await poll(() => full.textContent()).toContain('echo sub-echo');
    await poll(() => full.locator('.subagent-source').textContent()).toContain("From the CLI's own transcript");
    await screenshot(page, 'agent-work-subagent-desktop');
  });

  it('a running subagent has a Stop beside its row at phone and desktop size, and Stop stops it in Claude Code: the row ends failed on both', async () => {
    await newChat('work-stop-subagent');
    const phone = await openChat('phone', 'work-stop-subagent');
    const desktop = await openChat('desktop', 'work-stop-subagent');
    await write(phone, 'KW-LONGTASK');
    const rowOf = (page: Page) => page.locator('.thread-row[data-kind="subagent"]').filter({ hasText: 'Wait long' });
    const stopOf = (page: Page) => rowOf(page).getByRole('button', { name: 'Stop Wait long' });
    // Running once its own command runs (the sleep inside its work).
    const row = rowOf(phone);
    await row.waitFor({ timeout: 90_000 });
    await row.getByRole('button', { name: /Wait long .*show its work/ }).click();
    await row.locator('.subagent-work .tool-state.state-running').waitFor({ timeout: 90_000 });
    for (const page of [phone, desktop]) {
      await stopOf(page).waitFor();
      // Beside the row's head, on screen, not inside the fold's button.
      const box = (await stopOf(page).boundingBox())!;
      const width = page.viewportSize()!.width;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(width);
      expect(await stopOf(page).evaluate((el) => el.closest('.fold-toggle') === null && el.closest('.fold-head') !== null)).toBe(true);
    }
    expect(await accessibilityViolations(phone, { exclude: ['.composer-area'] })).toEqual([]);
    await screenshot(phone, 'agent-work-subagent-stop-phone');
    await screenshot(desktop, 'agent-work-subagent-stop-desktop');

    await stopOf(desktop).click();
    // The row settles when Claude Code reports the subagent's task stopped, on every device; the Stop goes.
    for (const page of [phone, desktop]) {
      await poll(() => rowOf(page).locator('.fold').first().getAttribute('class')).toContain('status-failed');
      await poll(() => stopOf(page).count()).toBe(0);
    }
    // The turn goes on without it and ends; the sleep never finished.
    await poll(() => settledTurns(phone).count()).toBe(1);
    expect(await row.locator('.subagent-work .tool-state.state-done').count()).toBe(0);
  });

  it("a turn that stopped on the usage limit says so in the chat's header until the next turn opens", async () => {
    await newChat('work-limit');
    const page = await openChat('phone', 'work-limit');
    await write(page, 'KW-LIMIT');
    const limit = page.locator('.chat-header .chat-limit');
    await limit.waitFor({ timeout: 90_000 });
    // Claude Code's 429 names no reset time (its retry-after is not passed on in stream-json).
    await poll(() => limit.textContent()).toBe('Stopped on the usage limit; the CLI named no reset time');
    await screenshot(page, 'agent-work-limit-phone');
    await write(page, 'KW-HELLO');
    await limit.waitFor({ state: 'detached', timeout: 90_000 });
  });

  it("offers the chat's skills after `$` with where each comes from, and sends the one picked with the message", async () => {
    await newChat('work-skills');
    const page = await openChat('desktop', 'work-skills');
    const box = messageBox(page);
    await box.fill('please use $');
    const menu = page.getByRole('listbox', { name: 'Skills' });
    await menu.waitFor();
    const options = menu.getByRole('option');
    // The two from the folders first (the CLI's init frame may add its bundled ones after them).
    await poll(() => options.nth(0).textContent()).toContain('$release-notes · yours');
    await poll(() => options.nth(0).textContent()).toContain('Write the release notes from the merged changes');
    await poll(() => options.nth(1).textContent()).toContain('$deploy-check · this project');
    await poll(() => options.nth(2).textContent()).toContain('$tools:lint-fix · plugin');
    await poll(() => options.nth(2).textContent()).toContain('Fix the lint errors');
    await box.pressSequentially('dep');
    await poll(() => options.nth(0).textContent()).toContain('$deploy-check');
    await box.press('Enter');
    await poll(() => box.inputValue()).toBe('please use $deploy-check ');
    await box.pressSequentially('KW-HELLO');
    await box.press('Enter');
    const sent = page.locator('.thread-row[data-kind="user"]');
    await sent.waitFor({ timeout: 60_000 });
    const approver = approvers.at(-1)!;
    const user = await approver.waitFor((f) => f.event === 'chat.event' && f.payload.event.item?.kind === 'user', 'the user item');
    expect(user.payload.event.item).toMatchObject({ text: 'please use $deploy-check KW-HELLO', skills: ['deploy-check'] });
    await screenshot(page, 'agent-work-skills-desktop');
  });
});
