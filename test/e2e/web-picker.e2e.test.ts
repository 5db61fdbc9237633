// The host page's agents view and the new chat's folder picker in Chromium, at a phone (390×844) and
// a desktop (1280×800), against the real relay and a real host process whose PATH holds no agent CLI
// (so it serves the scripted demo agent, and says so). The picker is backed by the host's own
// read-only `folders.list`: recent folders first, the allowed roots, git repositories marked, a
// symlink leading out of the roots and hidden folders never shown, and a typed path outside the
// roots refused by the host with the allowed folders named, before any chat is made; for a
// repository, the option to start in a new git worktree on a new branch.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostConnection, RelayApi } from '../../src/client/index.ts';
import type { Page } from 'playwright-core';
import { accessibilityViolations, screenshot, signedInLobby, signedInPerson, type SignedInPerson, type Size } from './browser.ts';
import { HostProcess } from './peers.ts';

const OWNER = 'web-picker-a';
const host = new HostProcess(`picker-box-${crypto.randomUUID().slice(0, 6)}`, OWNER);
/** The host's two roots, and a folder outside both that a symlink inside one leads to. */
const WORK = path.join(host.dataDir, 'work');
const NOTES = path.join(host.dataDir, 'notes');
const OUTSIDE = mkdtempSync(path.join(tmpdir(), 'tether-picker-outside-'));
const APP = path.join(WORK, 'app');
const LIB = path.join(WORK, 'lib');

/** Folders this host's chats worked in, most recent first (each size's test makes one more in app). */
const recentFolders = [LIB];
let api: RelayApi;
let lobby: HostConnection;
const people: SignedInPerson[] = [];

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, stdio: 'ignore', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
}

beforeAll(async () => {
  for (const dir of [APP, LIB, path.join(WORK, '.hidden'), NOTES, path.join(OUTSIDE, 'secrets')]) mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(WORK, 'README.md'), 'a file, not a folder');
  symlinkSync(OUTSIDE, path.join(WORK, 'escape'));
  git(APP, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(APP, 'index.js'), 'console.log(1);\n');
  git(APP, 'add', '.');
  git(APP, '-c', 'user.name=t', '-c', 'user.email=t@e2e.test', 'commit', '-q', '-m', 'first');
  writeFileSync(path.join(host.dataDir, 'config.json'), JSON.stringify({ policy: { roots: [WORK, NOTES], modeCeiling: 'auto-accept-edits' } }));
  // No agent CLI on this PATH (git is in /usr/bin): the host serves its demo agent and says why.
  host.env = { ...process.env, PATH: '/usr/bin:/bin' };
  await host.start();
  ({ api, lobby } = await signedInLobby(OWNER, host));
  // A chat that worked in lib: lib is the recent folder.
  await lobby.request('chat.create', { chatId: crypto.randomUUID(), cwd: LIB });
});

afterAll(async () => {
  lobby?.close();
  await Promise.all(people.map((p) => p.close()));
  await host.stop();
});

async function person(size: Size, at: string): Promise<SignedInPerson> {
  const made = await signedInPerson(size, OWNER, { path: at });
  people.push(made);
  return made;
}

/** Nothing on the page is wider than the viewport (a long path must wrap, not push the page sideways). */
async function fitsWidth(page: Page): Promise<void> {
  const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
  expect(scroll).toBeLessThanOrEqual(width);
}

describe.each<Size>(['phone', 'desktop'])('on a %s', (size) => {
  it('the host page shows its agents (served, from where, why), what it allows, and how to change it on the machine', async () => {
    const { page } = await person(size, `/hosts/${encodeURIComponent(host.hostId)}`);
    const agents = page.getByTestId('host-agents');
    await agents.waitFor();
    const served = agents.getByRole('list', { name: 'Agents this host serves' }).getByRole('listitem');
    expect(await served.count()).toBe(1);
    const demo = await served.first().textContent();
    expect(demo).toContain('Demo agent (scripted)');
    expect(demo).toMatch(/from .*script\.default\.json/);
    expect(demo).toContain('no agent CLI that can chat was found on PATH');
    expect(await agents.getByRole('status').textContent()).toContain('serves the scripted demo agent');
    // Every supported CLI is named with why it is not served.
    await agents.getByText(/Not served \(4\)/).click();
    const others = await agents.getByRole('list', { name: 'Agents this host does not serve' }).getByRole('listitem').allTextContents();
    for (const name of ['Claude Code', 'Codex', 'Gemini CLI', 'Copilot CLI']) {
      expect(
        others.find((line) => line.startsWith(name)),
        `${name} in ${others.join(' | ')}`,
      ).toMatch(/not on PATH/);
    }
    const allows = await page.getByTestId('host-policy').textContent();
    expect(allows).toContain(`Folders: ${WORK}, ${NOTES}`);
    expect(allows).toContain('Widest runtime mode: auto-accept-edits');
    // How to change them: the config file it reads and the commands, for this host's data folder.
    const change = page.getByTestId('host-change');
    await change.getByText('How to change these').click();
    const text = await change.textContent();
    expect(text).toContain(`edit its config file:${path.join(host.dataDir, 'config.json')}`);
    expect(text).toContain(`tether host start --data ${host.dataDir}`);
    expect(text).toContain(`tether host doctor --data ${host.dataDir}`);
    expect(text).toContain('"roots"');
    await fitsWidth(page);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, `picker-host-agents-${size}`);
  });

  it('the new chat picks its folder from what the host allows: recent first, roots, git marked, nothing outside', async () => {
    const { page } = await person(size, `/chats/new?host=${encodeURIComponent(host.hostId)}`);
    const chosen = page.getByTestId('folder-chosen');
    await chosen.waitFor();
    // Nothing picked yet: the host's default folder is named (the first root: its home is no root).
    expect(await chosen.textContent()).toContain(`the host's default folder, ${WORK}`);
    const recent = page.getByRole('list', { name: 'Recent folders' }).getByRole('button');
    await recent.first().waitFor();
    await expect.poll(() => recent.count()).toBe(recentFolders.length);
    const listed = await recent.allTextContents();
    expect(listed.map((text, i) => text.startsWith(recentFolders[i]))).toEqual(recentFolders.map(() => true));
    const roots = page.getByRole('list', { name: 'Allowed folders' }).getByRole('button');
    expect(await roots.allTextContents()).toEqual([WORK, NOTES]);
    // Recent comes before the roots on the page.
    const [recentTop, rootsTop] = await Promise.all([
      page.getByRole('list', { name: 'Recent folders' }).boundingBox(),
      page.getByRole('list', { name: 'Allowed folders' }).boundingBox(),
    ]);
    expect(recentTop!.y).toBeLessThan(rootsTop!.y);
    await screenshot(page, `picker-top-${size}`);

    await roots.filter({ hasText: WORK }).click();
    await expect.poll(() => chosen.textContent()).toBe(`Works in ${WORK}`);
    const inWork = page.getByRole('list', { name: `Folders in ${WORK}` }).getByRole('button');
    // (Once a worktree was made, its folder beside app is listed too.)
    await expect
      .poll(() => inWork.allTextContents())
      .toEqual(['appgit', ...(recentFolders.some((f) => f.includes('app-worktrees')) ? ['app-worktrees'] : []), 'lib']);
    // Hidden folders, files and the symlink that leads out of the roots are not offered.
    expect(await page.getByRole('button', { name: /escape|\.hidden|README/ }).count()).toBe(0);

    // A typed path outside the roots (absolute, through .., through the symlink) is refused by the
    // host, naming the allowed folders; the folder chosen stays what it was.
    for (const typed of ['/etc', `${WORK}/../`, path.join(WORK, 'escape'), path.join(WORK, 'escape', 'secrets')]) {
      await page.getByLabel('Or type a folder').fill(typed);
      await page.getByRole('button', { name: 'Open', exact: true }).click();
      await expect.poll(() => page.getByTestId('folder-error').textContent(), { message: typed }).toContain(`allowed folders: ${WORK}, ${NOTES}`);
      expect(await chosen.textContent()).toBe(`Works in ${WORK}`);
    }
    await fitsWidth(page);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, `picker-refused-${size}`);

    await inWork.filter({ hasText: /^appgit$/ }).click();
    await expect.poll(() => chosen.textContent()).toBe(`Works in ${APP}git`);
    await page.getByRole('button', { name: `Up to ${WORK}` }).waitFor();
    await page.getByRole('button', { name: 'Create chat' }).click();
    await page.waitForURL(new RegExp(`/hosts/${host.hostId}/chats/[0-9a-f-]{36}$`));
    const chatId = new URL(page.url()).pathname.split('/').pop()!;
    expect((await api.chats()).find((c) => c.info.chatId === chatId)?.info.cwd).toBe(APP);
    if (recentFolders[0] !== APP) recentFolders.unshift(APP);
  });

  it('starts a chat in a new git worktree on a new branch, offered only for a repository, the branch name checked first', async () => {
    const { page } = await person(size, `/chats/new?host=${encodeURIComponent(host.hostId)}`);
    const chosen = page.getByTestId('folder-chosen');
    await chosen.waitFor();
    await page.getByLabel('Or type a folder').fill(LIB);
    await page.getByRole('button', { name: 'Open', exact: true }).click();
    await expect.poll(() => chosen.textContent()).toBe(`Works in ${LIB}`);
    // Not a repository: no worktree to offer.
    expect(await page.getByTestId('worktree-option').count()).toBe(0);
    await page.getByRole('button', { name: `Up to ${WORK}` }).click();
    await page
      .getByRole('list', { name: `Folders in ${WORK}` })
      .getByRole('button', { name: /^app\s*git/ })
      .click();
    await expect.poll(() => chosen.textContent()).toBe(`Works in ${APP}git`);
    await page.getByLabel('Start in a new git worktree, on a new branch').check();
    const branch = page.getByLabel('New branch', { exact: true });
    // A name that climbs out is refused here already (the host's own rule), and nothing can be sent.
    await branch.fill('../../escape');
    expect(await page.getByTestId('worktree-option').getByRole('alert').textContent()).toContain('A branch name is');
    expect(await page.getByRole('button', { name: 'Create chat' }).isDisabled()).toBe(true);
    await branch.fill(`picker/${size}`);
    expect(await page.getByTestId('worktree-option').textContent()).toContain(`app-worktrees/picker/${size}`);
    await fitsWidth(page);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, `picker-worktree-${size}`);
    await page.getByRole('button', { name: 'Create chat' }).click();
    await page.waitForURL(new RegExp(`/hosts/${host.hostId}/chats/[0-9a-f-]{36}$`));
    const chatId = new URL(page.url()).pathname.split('/').pop()!;
    const tree = path.join(WORK, 'app-worktrees', 'picker', size);
    expect((await api.chats()).find((c) => c.info.chatId === chatId)?.info.cwd).toBe(tree);
    expect(execFileSync('git', ['symbolic-ref', '--short', 'HEAD'], { cwd: tree, encoding: 'utf8' }).trim()).toBe(`picker/${size}`);
    expect(execFileSync('git', ['symbolic-ref', '--short', 'HEAD'], { cwd: APP, encoding: 'utf8' }).trim()).toBe('main');
    recentFolders.unshift(tree);
  });
});
