// What a person does in a chat, in a real browser against the real relay and a real host with the
// `script` provider: send and see the message delivered (with files, within the limits), approve from
// a second device while the first sees its card settle, answer and dismiss questions, queue / edit /
// stop while a turn runs, bookmark and name / rename / jump / remove, open a visual whose own script
// proves it cannot read the app's storage or cookies, go offline mid-stream and come back with
// nothing lost or doubled, and export the chat (JSON parsed with its schema, Markdown). Phone and
// desktop sizes; every control here is checked by axe and reached by keyboard.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import type { Download, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostConnection, RelayApi } from '../../src/client/index.ts';
import { ChatTranscriptSchema, visualFrameHeight } from '../../src/contracts/index.ts';
import { screenshot, signedInLobby, signedInPerson, until, type SignedInPerson, type Size } from './browser.ts';
import { HostProcess, personId, userToken } from './peers.ts';

const OWNER = 'interactions-owner';
const HELPER = 'interactions-helper';
const STREAMED = Array.from({ length: 80 }, (_, i) => `s${i}`).join(' ');

/** The visual's own script tries everything an app secret could leak through, and reports to its parent. */
const PROBE_HTML = `<!doctype html><html><body><p>probe</p><script>
const out = {};
const attempt = (name, read) => { try { out[name] = 'value:' + String(read()); } catch (error) { out[name] = 'error:' + error.name; } };
attempt('storage', () => localStorage.getItem('tether.session'));
attempt('session', () => sessionStorage.length);
attempt('cookie', () => document.cookie);
attempt('parentDocument', () => parent.document.title);
attempt('parentStorage', () => parent.localStorage.getItem('tether.session'));
attempt('origin', () => self.origin);
parent.postMessage({ probe: out }, '*');
parent.postMessage({ tetherVisual: 'height', height: 234 }, '*');
// And every way out of the page: the relay's CSP for visuals lets none of them leave.
const refused = [];
document.addEventListener('securitypolicyviolation', (e) => refused.push(e.effectiveDirective));
const net = {};
const tries = [
  ['fetch', () => fetch(location.origin + '/api/health').then(() => 'reached', (e) => 'error:' + e.name)],
  ['fetchAway', () => fetch('https://example.invalid/steal').then(() => 'reached', (e) => 'error:' + e.name)],
  ['socket', () => new Promise((done) => { try { const ws = new WebSocket(location.origin.replace('http', 'ws') + '/'); ws.onopen = () => done('reached'); ws.onerror = () => done('error'); } catch (e) { done('error:' + e.name); } })],
  ['beacon', async () => String(navigator.sendBeacon(location.origin + '/api/health', 'x'))],
];
Promise.all(tries.map(async ([name, run]) => { net[name] = await run(); })).then(() => {
  const form = document.createElement('form');
  form.method = 'post';
  form.action = location.origin + '/api/health';
  document.body.append(form);
  form.submit();
  setTimeout(() => parent.postMessage({ probeNet: { ...net, refused: [...new Set(refused)].sort() } }, '*'), 200);
});
</script></body></html>`;

/** Heights the publisher measured at three widths: the frame takes the taller neighbour of its width. */
const MEASURED: Array<[number, number]> = [
  [320, 150],
  [400, 170],
  [800, 120],
];

const SCRIPT = {
  replies: [
    {
      match: '\\bapprov',
      steps: [
        { type: 'text', text: 'Asking first.', delayMs: 5 },
        {
          type: 'approval',
          toolName: 'Bash',
          input: { command: 'npm test' },
          description: 'Run the test suite',
          canAllowAlways: true,
          allowAlways: { label: 'Always allow npm test', description: 'In this folder' },
          deniedText: 'Understood, not running it.',
        },
        { type: 'text', text: 'All 42 tests passed.', delayMs: 5 },
      ],
    },
    {
      match: '\\bquestion',
      steps: [
        {
          type: 'question',
          questions: [
            {
              id: 'color',
              header: 'Color',
              question: 'Which color?',
              multiSelect: false,
              choices: [
                { label: 'Blue', description: 'calm' },
                { label: 'Green', description: 'go' },
              ],
            },
            {
              id: 'sizes',
              header: 'Sizes',
              question: 'Which sizes?',
              multiSelect: true,
              choices: [
                { label: 'Small', description: '' },
                { label: 'Large', description: '' },
              ],
            },
          ],
        },
        { type: 'text', text: 'Going with {{answer:color}} in {{answer:sizes}}.' },
      ],
    },
    {
      match: '\\basync',
      steps: [
        {
          type: 'question',
          async: true,
          questions: [{ id: 'later', header: 'Later', question: 'Anything else?', multiSelect: false, choices: [{ label: 'No', description: '' }] }],
        },
      ],
    },
    {
      match: '\\bvisual',
      steps: [
        { type: 'text', text: 'A probe.' },
        { type: 'visual', title: 'Probe', html: PROBE_HTML, maxHeight: 600 },
        { type: 'visual', title: 'Measured', html: '<p>measured</p>', maxHeight: 900, heights: MEASURED },
      ],
    },
    {
      match: '\\btool',
      steps: [
        { type: 'tool', name: 'Read', input: { file_path: 'src/app.ts' }, output: 'export {};\n' },
        { type: 'text', text: 'Read it.' },
      ],
    },
    { match: '\\blong', steps: [{ type: 'text', text: Array.from({ length: 40 }, (_, i) => `Paragraph ${i} of a long reply.`).join('\n\n') }] },
    { match: '\\bstream', steps: [{ type: 'text', text: STREAMED, deltas: 80, delayMs: 40 }] },
    // The turn waits on its approval while the test changes the file, so the change is inside the turn
    // at any machine speed (with a fixed 1.5 s wait, a page that showed the reply later than that had
    // the file written after the turn's closing snapshot: a Changes dialog without notes.txt).
    {
      match: '\\bedit',
      steps: [
        { type: 'text', text: 'Editing the file.' },
        { type: 'approval', toolName: 'Write', input: { file_path: 'notes.txt', content: 'first line\nsecond line\n' }, description: 'Write the notes' },
        { type: 'text', text: 'Edited.' },
      ],
    },
    {
      match: '\\bslow',
      steps: [
        { type: 'text', text: 'Working slowly.' },
        { type: 'wait', ms: 20_000 },
        { type: 'text', text: 'Slow done.' },
      ],
    },
    { steps: [{ type: 'text', text: 'You said: {{text}}', deltas: 2, delayMs: 5 }] },
  ],
};

/** A git work tree a chat works in, so its turns have checkpoints and diffs. */
const work = mkdtempSync(path.join(tmpdir(), 'tether-web-work-'));
const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@e2e.test', ...args], { cwd: work });

const host = new HostProcess(`web-interactions-${crypto.randomUUID().slice(0, 6)}`, OWNER);
const people: SignedInPerson[] = [];
let api: RelayApi;
let lobby: HostConnection;
let axeSource = '';

/** Waits for `check` to hold, with the host's last output when it never does. */
const eventually = <T>(check: () => T | false | null | undefined | Promise<T | false | null | undefined>, what: string) =>
  until(check, what, { detail: () => host.output.slice(-1500) });

async function newChat(chatId: string): Promise<string> {
  await lobby.request('chat.create', { chatId });
  return chatId;
}

async function openChat(size: Size, chatId: string, label = OWNER): Promise<{ person: SignedInPerson; page: Page }> {
  const person = await signedInPerson(size, label, { path: `/hosts/${host.hostId}/chats/${chatId}` });
  people.push(person);
  await person.page.locator('.composer').waitFor();
  await person.page.locator('.thread-edge', { hasText: /No messages yet|Start of the chat|Older messages/ }).waitFor();
  return { person, page: person.page };
}

/** expect.poll with room for a relay round trip and a turn (its default gives up after a second). */
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 30_000 });

const rows = (page: Page, kind: string) => page.locator(`.thread-row[data-kind="${kind}"]`);
const messageBox = (page: Page) => page.getByRole('combobox', { name: 'Message' });

/** Types into the composer and sends with the keyboard (Enter on a desktop, the button on a phone). */
async function write(page: Page, size: Size, text: string): Promise<void> {
  await messageBox(page).fill(text);
  if (size === 'desktop') await messageBox(page).press('Enter');
  else await page.getByRole('button', { name: /^(Send|Queue|Steer)$/ }).click();
}

const sendState = (page: Page, text: string) => page.locator('.send-list li', { hasText: text }).getAttribute('data-state');
/** How many times the composer lists a message as still on its way (a delivered one is in the thread or the queue instead). */
const onItsWay = (page: Page, text: string) => page.locator('.send-list li', { hasText: text }).count();

/** Chooses `choice` in the menu at the foot of `turn`. */
async function replyAction(page: Page, turn: Locator, choice: string): Promise<void> {
  await turn.getByRole('button', { name: 'Reply actions' }).click();
  await page.getByRole('menu', { name: 'Reply actions' }).getByRole('menuitem', { name: choice }).click();
}

/** A download's text (the browser is remote: its file is copied here first). */
async function downloaded(download: Download): Promise<string> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'tether-download-')), download.suggestedFilename());
  await download.saveAs(file);
  return readFileSync(file, 'utf8');
}

/** Uncaught errors of the app's scripts. */
const appErrors = (person: SignedInPerson) => person.errors;

/** axe on the parts this file's components draw: no violations (labels, roles, names, contrast). */
async function checkAccessible(page: Page, selectors: string[]): Promise<void> {
  // Evaluated by the browser's debugger, not as an inline <script>, which the app's CSP refuses.
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async (include) => {
    const axe = (
      window as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: Array<{ id: string; nodes: Array<{ target: unknown }> }> }> } }
    ).axe;
    const present = include.filter((s) => document.querySelector(s));
    const result = await axe.run({ include: present.map((s) => [s]) }, { runOnly: ['wcag2a', 'wcag2aa'] });
    return result.violations.map((v) => `${v.id}: ${JSON.stringify(v.nodes.map((n) => n.target))}`);
  }, selectors);
  expect(violations).toEqual([]);
}

beforeAll(async () => {
  axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await Promise.all([userToken(OWNER), userToken(HELPER)]);
  writeFileSync(path.join(work, 'notes.txt'), 'first line\n');
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
  writeFileSync(path.join(host.dataDir, 'interactions-script.json'), JSON.stringify(SCRIPT));
  writeFileSync(
    path.join(host.dataDir, 'config.json'),
    JSON.stringify({
      providers: { claude: { backend: 'script', script: 'interactions-script.json' } },
      policy: { roots: [work, homedir()] },
    }),
  );
  await host.start();
  ({ api, lobby } = await signedInLobby(OWNER, host));
  // The helper may act in every chat of the host, as an operator (not its owner).
  await api.grant(host.hostId, { subject: { type: 'user', id: await personId(HELPER) }, role: 'operator' });
});

afterAll(async () => {
  await Promise.all(people.map((p) => p.close()));
  lobby?.close();
  await host.stop();
});

describe('chat interactions in the browser', () => {
  it.each(['desktop', 'phone'] as const)(
    'at %s size: a message is sent, shows in the thread once delivered (listed once), and its files go with it within the limits',
    async (size) => {
      const chatId = await newChat(`web-send-${size}`);
      const { person, page } = await openChat(size, chatId);
      await write(page, size, `hello from the ${size}`);
      await rows(page, 'assistant')
        .filter({ hasText: `You said: hello from the ${size}` })
        .waitFor();
      expect(
        await rows(page, 'user')
          .filter({ hasText: `hello from the ${size}` })
          .count(),
      ).toBe(1);
      await poll(() => onItsWay(page, `hello from the ${size}`)).toBe(0);

      // Files: an image previewed before it goes; past the limit of 8 the rest are refused, in words.
      const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
      const files = Array.from({ length: 9 }, (_, i) => ({ name: `f${i}.png`, mimeType: 'image/png', buffer: png }));
      await page.locator('.composer input[type="file"]').setInputFiles(files);
      await poll(() => page.locator('.composer-file').count()).toBe(8);
      expect(await page.locator('.composer-notice').textContent()).toContain('at most 8 files');
      expect(await page.getByRole('img', { name: 'Preview of f0.png' }).count()).toBe(1);
      for (let i = 7; i >= 1; i--) await page.getByRole('button', { name: `Remove f${i}.png` }).click();
      await write(page, size, 'with a picture');
      const sent = rows(page, 'user').filter({ hasText: 'with a picture' });
      await sent.locator('.attachment', { hasText: 'f0.png' }).waitFor();
      await poll(() => onItsWay(page, 'with a picture')).toBe(0);
      // The picture comes back from the host through the relay's attachment route and is drawn.
      const picture = sent.getByRole('img', { name: 'f0.png' });
      await poll(() => picture.evaluate((img: HTMLImageElement) => (img.complete ? img.naturalWidth : 0))).toBeGreaterThan(0);
      expect(new URL((await picture.getAttribute('src')) ?? '', 'http://x').pathname).toMatch(/^\/v1\/attachments\//);
      expect(await page.locator('.composer-file').count()).toBe(0);

      if (size === 'desktop') {
        // `@` suggests the files this chat has touched; the keyboard picks one, and it goes as a mention.
        await write(page, size, 'use a tool');
        await rows(page, 'assistant').filter({ hasText: 'Read it.' }).waitFor();
        await messageBox(page).pressSequentially('look at @app');
        const suggestion = page.getByRole('listbox', { name: 'Files' }).getByRole('option', { name: '@src/app.ts' });
        await suggestion.waitFor();
        expect(await messageBox(page).getAttribute('aria-expanded')).toBe('true');
        await messageBox(page).press('Enter');
        expect(await messageBox(page).inputValue()).toBe('look at @src/app.ts ');
        await messageBox(page).press('Enter');
        await rows(page, 'user').filter({ hasText: 'look at @src/app.ts' }).locator('.msg-refs code', { hasText: '@src/app.ts' }).waitFor();
      }
      await checkAccessible(page, ['.composer-area', '.chat-toolbar']);
      await screenshot(page, `interactions-send-${size}`);
      expect(appErrors(person)).toEqual([]);
    },
  );

  it('an approval answered on a second device (another person, an operator) settles on the first; deny takes a reason', async () => {
    const chatId = await newChat('web-approve');
    const first = await openChat('desktop', chatId);
    const second = await openChat('phone', chatId, HELPER);
    await write(first.page, 'desktop', 'please approve the tests');
    const cardOf = (page: Page) => page.locator('.approval-card').last();
    await cardOf(first.page).getByRole('button', { name: 'Allow', exact: true }).waitFor();
    await cardOf(second.page).getByRole('button', { name: 'Always allow npm test' }).waitFor();
    expect(await cardOf(first.page).locator('.approval-command').textContent()).toBe('npm test');
    // In words, the command once: the card's title says what it asks, and its tool's row only that it waits.
    expect(await cardOf(first.page).locator('.request-title').textContent()).toBe('Run this command? Bash');
    expect(await first.page.locator('.approval-command').count()).toBe(1);
    await checkAccessible(first.page, ['.approval-card']);
    await screenshot(second.page, 'interactions-approval-phone');

    await cardOf(second.page).getByRole('button', { name: 'Always allow npm test' }).click();
    await poll(() => cardOf(second.page).locator('.request-state').textContent()).toBe('Always allowed: Always allow npm test');
    // The first device never clicked: its card settles from the thread, and says it was answered elsewhere.
    await poll(() => cardOf(first.page).locator('.request-state').textContent()).toBe('Always allowed: Always allow npm test (answered elsewhere)');
    expect(await cardOf(first.page).getByRole('button').count()).toBe(0);
    await rows(first.page, 'assistant').filter({ hasText: 'All 42 tests passed.' }).waitFor();
    await screenshot(first.page, 'interactions-approval-settled-desktop');

    // The same person as the first device, on a phone: another person answered, so "elsewhere" again.
    const same = await openChat('phone', chatId);
    await poll(() => cardOf(same.page).locator('.request-state').textContent()).toBe('Always allowed: Always allow npm test (answered elsewhere)');

    // Deny with a reason (the scripted CLI takes one): by keyboard, from the first device.
    await write(first.page, 'desktop', 'approve once more');
    await poll(() => first.page.locator('.approval-card.pending').count()).toBe(1);
    const pending = first.page.locator('.approval-card.pending');
    await pending.getByRole('button', { name: 'Deny…' }).click();
    const reason = pending.getByRole('textbox', { name: 'Reason for the agent (optional)' });
    await poll(() => reason.evaluate((el) => el === document.activeElement)).toBe(true);
    await reason.fill('not on a Friday');
    await reason.press('Tab');
    await first.page.keyboard.press('Enter');
    // The reason is on every card; "elsewhere" only where another person sees it, not on this person's phone.
    await poll(() => cardOf(first.page).locator('.request-state').textContent()).toBe('Denied: not on a Friday');
    await poll(() => cardOf(second.page).locator('.request-state').textContent()).toBe('Denied: not on a Friday (answered elsewhere)');
    await poll(() => cardOf(same.page).locator('.request-state').textContent()).toBe('Denied: not on a Friday');
    expect(same.person.errors).toEqual([]);
    await rows(first.page, 'assistant').filter({ hasText: 'Understood, not running it.' }).waitFor();
    expect(first.person.errors).toEqual([]);
    expect(second.person.errors).toEqual([]);
  });

  it('at phone size: a question is answered (a choice and a multi-select), an async one dismissed', async () => {
    const chatId = await newChat('web-question');
    const { person, page } = await openChat('phone', chatId);
    await write(page, 'phone', 'a question please');
    const card = page.locator('.question-card.pending');
    await card.waitFor();
    const answer = card.getByRole('button', { name: 'Answer' });
    expect(await answer.isDisabled()).toBe(true);
    await card.getByRole('radio', { name: /Green/ }).check();
    await card.getByRole('checkbox', { name: /Small/ }).check();
    await card.getByRole('checkbox', { name: /Large/ }).check();
    await checkAccessible(page, ['.question-card']);
    await screenshot(page, 'interactions-question-phone');
    await answer.click();
    await rows(page, 'assistant').filter({ hasText: 'Going with Green in Small, Large.' }).waitFor();
    const settled = page.locator('.question-card').last();
    expect(await settled.locator('.request-state').textContent()).toBe('Answered');
    expect(await settled.locator('dd').allTextContents()).toEqual(['Green', 'Small, Large']);

    await write(page, 'phone', 'an async one');
    await page.locator('.question-card.pending').getByRole('button', { name: 'Dismiss' }).click();
    await poll(() => page.locator('.question-card').last().locator('.request-state').textContent()).toBe('Dismissed');
    expect(appErrors(person)).toEqual([]);
  });

  it('at desktop size: while a turn runs a message is queued, taken back to edit, another steers it, and the turn stopped', async () => {
    const chatId = await newChat('web-queue');
    const { person, page } = await openChat('desktop', chatId);
    await write(page, 'desktop', 'something slow');
    await page.getByRole('button', { name: 'Stop' }).waitFor();
    expect(await page.getByRole('radio', { name: 'Queue for after this turn' }).isChecked()).toBe(true);
    await write(page, 'desktop', 'after that, this');
    await page.locator('.queued', { hasText: 'after that, this' }).waitFor();
    await checkAccessible(page, ['.composer-area']);
    await page.locator('.queued', { hasText: 'after that, this' }).getByRole('button', { name: 'Edit' }).click();
    await poll(() => page.locator('.queued').count()).toBe(0);
    expect(await messageBox(page).inputValue()).toBe('after that, this');
    // Steering instead: the message goes into the running turn (the scripted CLI can steer), not the queue.
    await messageBox(page).fill('');
    await page.getByRole('radio', { name: 'Steer this turn' }).check();
    await write(page, 'desktop', 'steer this way');
    // In the running turn at once: a queued message would wait in the queue, with no message in the thread yet.
    await rows(page, 'user').filter({ hasText: 'steer this way' }).waitFor();
    await poll(() => onItsWay(page, 'steer this way')).toBe(0);
    expect(await page.getByRole('button', { name: 'Stop' }).count()).toBe(1);
    expect(await page.locator('.queued').count()).toBe(0);
    await page.getByRole('button', { name: 'Stop' }).click();
    await poll(() => rows(page, 'turn').last().locator('.turn-state').textContent()).toBe('Stopped');
    await poll(() => page.getByRole('button', { name: 'Stop' }).count()).toBe(0);
    expect(appErrors(person)).toEqual([]);
  });

  it('at desktop size: a reply is bookmarked, named, renamed, jumped to after it scrolled away, and removed', async () => {
    const chatId = await newChat('web-bookmarks');
    const { person, page } = await openChat('desktop', chatId);
    await write(page, 'desktop', 'remember this one');
    await replyAction(page, rows(page, 'turn').first(), 'Bookmark the reply');
    await poll(() => rows(page, 'turn').first().getByText('Bookmarked').count()).toBe(1);
    await page.getByRole('button', { name: 'Bookmarks (1)' }).click();
    const panel = page.getByRole('region', { name: 'Bookmarks' });
    await panel.getByRole('button', { name: 'Name' }).click();
    const name = panel.getByRole('textbox', { name: 'Bookmark name' });
    await name.fill('The first answer');
    await name.press('Enter');
    await panel.getByText('The first answer').waitFor();
    await panel.getByRole('button', { name: 'Rename' }).click();
    await name.fill('First answer, renamed');
    await panel.getByRole('button', { name: 'Save' }).click();
    await panel.getByText('First answer, renamed').waitFor();
    await checkAccessible(page, ['.chat-toolbar']);

    // Scroll it away (a long reply), then jump: the thread brings it back and highlights it.
    await page.getByRole('button', { name: 'Bookmarks (1)' }).click();
    await write(page, 'desktop', 'now a long one');
    await poll(() => rows(page, 'turn').count()).toBe(2);
    await rows(page, 'assistant').filter({ hasText: 'Paragraph 39' }).waitFor();
    const shown = () =>
      page.evaluate(() => {
        const view = document.querySelector('.thread-scroll')!.getBoundingClientRect();
        return [...document.querySelectorAll('.thread-row[data-kind="assistant"]')].some((row) => {
          const box = row.getBoundingClientRect();
          return row.textContent!.includes('You said: remember this one') && box.bottom > view.top && box.top < view.bottom;
        });
      });
    await poll(shown).toBe(false);
    await page.getByRole('button', { name: 'Bookmarks (1)' }).click();
    await panel.getByRole('button', { name: /First answer, renamed/ }).click();
    const target = page.locator('.thread-row.focused');
    await target.waitFor();
    expect(await target.textContent()).toContain('You said: remember this one');
    await poll(shown).toBe(true);
    await screenshot(page, 'interactions-bookmarks-desktop');

    await page.getByRole('button', { name: 'Bookmarks (1)' }).click();
    await panel.getByRole('button', { name: 'Remove' }).click();
    await panel.getByText('No bookmarks yet').waitFor();
    await poll(() => page.getByRole('button', { name: 'Bookmarks', exact: true }).count()).toBe(1);
    expect(appErrors(person)).toEqual([]);
  });

  it("at phone size: a visual is drawn in a sandboxed frame that cannot read the app's storage or cookies", async () => {
    const chatId = await newChat('web-visual');
    const { person, page } = await openChat('phone', chatId);
    await page.evaluate(() => {
      document.cookie = 'app-secret=cookie-value; path=/';
      const w = window as unknown as { probes: unknown[] };
      w.probes = [];
      addEventListener('message', (event) => w.probes.push(event.data));
    });
    expect(await page.evaluate(() => localStorage.getItem('tether.session'))).toContain('refreshToken');
    await write(page, 'phone', 'a visual please');
    const frame = page.locator('iframe[title="Probe"]');
    await frame.waitFor();
    expect(await frame.getAttribute('sandbox')).toBe('allow-scripts');
    expect(await frame.getAttribute('title')).toBe('Probe');
    const probe = await eventually(
      () => page.evaluate(() => (window as unknown as { probes: Array<{ probe?: Record<string, string> }> }).probes.find((m) => m.probe)?.probe),
      'the probe reported',
    );
    expect(probe.storage).toBe('error:SecurityError');
    expect(probe.session).toBe('error:SecurityError');
    expect(probe.cookie).toBe('error:SecurityError');
    expect(probe.parentDocument).toBe('error:SecurityError');
    expect(probe.parentStorage).toBe('error:SecurityError');
    expect(probe.origin).toBe('value:null');
    // Nothing leaves the page: fetch, sockets and beacons are refused.
    const net = await eventually(
      () => page.evaluate(() => (window as unknown as { probes: Array<{ probeNet?: Record<string, unknown> }> }).probes.find((m) => m.probeNet)?.probeNet),
      'the network probe reported',
    );
    // (sendBeacon answers true once it queued the beacon, whatever happens to it after: its refusal is among the CSP's.)
    expect(net).toMatchObject({ fetch: 'error:TypeError', fetchAway: 'error:TypeError', socket: expect.stringMatching(/^error/) });
    // In the app's frame the form never gets as far as the CSP: the frame's own sandbox has no
    // allow-forms. (form-action 'none' holds where the page is opened by itself: test/relay/state.test.ts.)
    expect(net.refused).toContain('connect-src');
    // The page asked for its height; the frame took it (within the visual's limits).
    await poll(() => frame.evaluate((el) => el.getBoundingClientRect().height)).toBe(234);
    // A visual that says nothing is as tall as its publisher measured it at the frame's width.
    const measured = page.locator('.visual-frame', { hasText: 'Measured' });
    const width = await measured.evaluate((el) => el.getBoundingClientRect().width);
    const expected = visualFrameHeight({ heights: MEASURED, maxHeight: 900 }, Math.round(width))!;
    expect(expected).toBe(170);
    await poll(() => measured.locator('iframe').evaluate((el) => el.getBoundingClientRect().height)).toBe(expected);
    // The frame's address carries a page ticket, never the person's token.
    const src = (await frame.getAttribute('src'))!;
    const session = JSON.parse((await page.evaluate(() => localStorage.getItem('tether.session')))!) as { accessToken: string; refreshToken: string };
    expect(src).toContain('ticket=');
    expect(src).not.toContain(session.accessToken);
    expect(src).not.toContain(session.refreshToken);
    await screenshot(page, 'interactions-visual-phone');
    expect(appErrors(person)).toEqual([]);
  });

  it('at desktop size: offline mid-stream, a message is kept, and back online it is delivered once with the reply whole', async () => {
    const chatId = await newChat('web-offline');
    const { person, page } = await openChat('desktop', chatId);
    await write(page, 'desktop', 'please stream');
    const reply = rows(page, 'assistant').filter({ hasText: 's0 s1' });
    await reply.waitFor();
    await person.context.setOffline(true);
    await page.locator('.link-state', { hasText: 'Offline' }).waitFor();
    await write(page, 'desktop', 'sent while offline');
    await poll(() => sendState(page, 'sent while offline')).toBe('kept');
    expect(await page.locator('.send-list li', { hasText: 'sent while offline' }).textContent()).toContain('Kept in this browser');
    await screenshot(page, 'interactions-offline-desktop');
    await person.context.setOffline(false);
    await rows(page, 'assistant').filter({ hasText: 'You said: sent while offline' }).waitFor();
    await poll(() => onItsWay(page, 'sent while offline')).toBe(0);
    await poll(async () => (await reply.locator('.markdown').textContent())?.trim()).toBe(STREAMED);
    expect(await rows(page, 'user').filter({ hasText: 'sent while offline' }).count()).toBe(1);
    expect(await rows(page, 'assistant').filter({ hasText: 's0 s1' }).count()).toBe(1);
    expect(appErrors(person)).toEqual([]);
  });

  it('at desktop size: the chat exports as a JSON transcript (its schema parses it) and as Markdown', async () => {
    const chatId = await newChat('web-export');
    const { person, page } = await openChat('desktop', chatId);
    await write(page, 'desktop', 'first words');
    await rows(page, 'assistant').filter({ hasText: 'You said: first words' }).waitFor();
    await write(page, 'desktop', 'second words');
    await rows(page, 'assistant').filter({ hasText: 'You said: second words' }).waitFor();
    await page.getByRole('button', { name: 'Export' }).click();
    const [json] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download JSON' }).click()]);
    expect(json.suggestedFilename()).toMatch(/\.json$/);
    const transcript = ChatTranscriptSchema.parse(JSON.parse(await downloaded(json)));
    expect(transcript.chat.id).toBe(chatId);
    expect(transcript.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    const [markdown] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download Markdown' }).click()]);
    expect(markdown.suggestedFilename()).toMatch(/\.md$/);
    const text = await downloaded(markdown);
    for (const words of ['first words', 'You said: first words', 'second words', 'You said: second words']) expect(text).toContain(words);
    expect(appErrors(person)).toEqual([]);
  });

  it("at phone size: a turn's changes show as a diff, and a fork from it opens a new chat with its history", async () => {
    const chatId = 'web-fork';
    await lobby.request('chat.create', { chatId, cwd: work });
    const { person, page } = await openChat('phone', chatId);
    await write(page, 'phone', 'please edit the notes');
    const approval = page.locator('.approval-card').last().getByRole('button', { name: 'Allow', exact: true });
    await approval.waitFor();
    writeFileSync(path.join(work, 'notes.txt'), 'first line\nsecond line\n');
    await approval.click();
    // Opened as soon as the turn settles: the dialog reads the diff again once the closing snapshot
    // (taken just after) is in the turn's item.
    const turn = rows(page, 'turn').last();
    await replyAction(page, turn, 'Changes in this turn');
    const diff = page.getByRole('dialog', { name: 'Changes in this turn' });
    await diff.waitFor();
    await poll(async () => (await diff.textContent())?.includes('notes.txt') || (await diff.textContent())).toBe(true);
    expect(await diff.locator('.diff-add').allTextContents()).toEqual(['+second line\n']);
    await checkAccessible(page, ['.tool-dialog']);
    await screenshot(page, 'interactions-turn-diff-phone');
    await page.keyboard.press('Escape');
    await poll(() => diff.count()).toBe(0);

    await replyAction(page, turn, 'Fork from here');
    const dialog = page.getByRole('dialog', { name: 'Fork this chat' });
    await dialog.getByText('git repository').waitFor();
    await dialog.getByRole('textbox', { name: 'Title (optional)' }).fill('A forked copy');
    await dialog.getByRole('button', { name: 'Fork', exact: true }).click();
    await poll(() => new URL(page.url()).pathname).not.toBe(`/hosts/${host.hostId}/chats/${chatId}`);
    expect(new URL(page.url()).pathname).toMatch(new RegExp(`^/hosts/${host.hostId}/chats/[^/]+$`));
    await rows(page, 'user').filter({ hasText: 'please edit the notes' }).waitFor();
    await rows(page, 'assistant').filter({ hasText: 'Edited.' }).waitFor();
    expect(appErrors(person)).toEqual([]);
  });
});
