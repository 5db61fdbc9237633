// `node bench/web-scroll.bench.ts` (part of `npm run bench`): how the thread view scrolls a
// 5,000-item chat in Chromium, through the real app route. A relay (wrangler dev, serving this
// checkout's web build) and a real host (`tether host start`, script provider) make the chat: one
// scripted turn of replies (markdown, some with code), tool calls with output and thoughts. The page
// opens the chat, loads every older page by scrolling to the top, then scrolls top to bottom a
// fixed distance per animation frame (a fast fling, 12,000 px/s) while timing the frames, then the
// first part again at a reading pace. Scrolling is driven from the page (scrollTop per frame), so
// every frame waits for the main thread: the harshest case. Prints frames, vsyncs missed (dropped
// frames), frame-time percentiles and memory, at desktop speed and with the CPU slowed 4× (a
// phone, roughly); WEB_SCROLL_PROFILE=desktop|phone runs one of the two.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { ChatChannel, HostConnection, MemoryOutboxStore, RelayApi } from '../src/client/index.ts';
import { pairWithSetupSecret } from '../src/host/pairing.ts';
import { generateSigningKey } from '../src/relay/auth/keys.ts';
import { buildWeb } from '../scripts/build-web.ts';
import { CHROMIUM, ensureChromium } from '../scripts/chromium.ts';
import { bundleWorker, startLocalRelay } from '../scripts/local-relay.ts';

const ITEMS = 5_000;
/** Pixels scrolled per animation frame: a brisk, steady fling. */
const STEP_PX = 200;
/** A reading pace (2,400 px/s), measured over the first READING_FRAMES frames of the thread. */
const READING_PX = 40;
const READING_FRAMES = 1_200;
const SETUP_SECRET = 'web-bench-setup-secret-0123456789';
const OWNER = { email: 'web-bench@bench.test', password: 'web-bench-password-0123', name: 'Bench' };
const root = path.resolve(import.meta.dirname, '..');

/** One turn whose steps make ITEMS items in all (with the person's message and the turn itself). */
function script(): unknown {
  const steps: unknown[] = [];
  for (let i = 0; steps.length < ITEMS - 2; i++) {
    switch (i % 4) {
      case 0:
        steps.push({
          type: 'text',
          text: `Step ${i}: reading **the module** and checking \`answer\` before the next edit. ${'More words to wrap. '.repeat(i % 7)}`,
        });
        break;
      case 1:
        steps.push({ type: 'tool', name: 'Bash', input: { command: `npm test -- --grep step-${i}` }, output: `> tether test\n\n  ${i} passed, 0 failed\n` });
        break;
      case 2:
        steps.push({ type: 'thinking', text: `Thinking about step ${i}.` });
        break;
      default:
        steps.push({
          type: 'text',
          text: `Here is step ${i}:\n\n\`\`\`ts\nexport const step = ${i};\nexport function next() {\n  return step + 1;\n}\n\`\`\`\n\n- one\n- two`,
        });
    }
  }
  return { replies: [{ steps }] };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function until<T>(check: () => T | false | null | undefined, what: string, ms = 300_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface ScrollRun {
  frames: number[];
  heapBefore: number;
  heapAfter: number;
  rowsInDom: number;
  height: number;
}

/** The same page's frames with nothing to do (the machine's own pacing, to read the figures against). */
function idleFrames(page: Page, count = 300): Promise<number[]> {
  return page.evaluate(
    (n) =>
      new Promise<number[]>((resolve) => {
        const frames: number[] = [];
        let last = 0;
        const tick = (at: number) => {
          if (last) frames.push(at - last);
          last = at;
          if (frames.length >= n) resolve(frames);
          else requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      }),
    count,
  );
}

type Metrics = Record<string, number>;

/**
 * Scrolls the thread down from its top, `step` px per frame, to its bottom or for `maxFrames` frames,
 * and answers the frame times.
 */
function scrollDown(page: Page, step: number, maxFrames = Number.POSITIVE_INFINITY): Promise<ScrollRun> {
  return page.evaluate(
    ([px, most]) =>
      new Promise<ScrollRun>((resolve) => {
        const el = document.querySelector<HTMLElement>('.thread-scroll')!;
        const heap = () => (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? 0;
        const heapBefore = heap();
        el.scrollTop = 0;
        const frames: number[] = [];
        let last = 0;
        const tick = (at: number) => {
          if (last) frames.push(at - last);
          last = at;
          if ((el.scrollTop + el.clientHeight >= el.scrollHeight - 1 && frames.length > 10) || frames.length >= most) {
            resolve({ frames, heapBefore, heapAfter: heap(), rowsInDom: el.querySelectorAll('.thread-row').length, height: el.scrollHeight });
            return;
          }
          el.scrollTop += px;
          requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      }),
    [step, maxFrames] as const,
  );
}

function report(label: string, run: ScrollRun, metrics: Metrics, before: Metrics, idle: number[]): void {
  const sorted = [...run.frames].sort((a, b) => a - b);
  const vsync = 1_000 / 60;
  const missed = run.frames.reduce((n, t) => n + Math.max(0, Math.round(t / vsync) - 1), 0);
  const f = (n: number) => n.toFixed(1);
  console.log(`\n${label}`);
  console.log(
    `  frames ${run.frames.length} over ${(run.frames.reduce((a, b) => a + b, 0) / 1_000).toFixed(1)} s, ${run.height.toLocaleString()} px of thread, ${run.rowsInDom} rows in the DOM at the end`,
  );
  // A frame "over 16.7 ms" is mostly timer jitter (a 60 Hz vsync is 16.67 ms); a frame that took more
  // than 1.5 vsyncs missed one, and the vsyncs missed in all are the frames a person saw dropped.
  const dropped = run.frames.filter((t) => t > vsync * 1.5).length;
  console.log(
    `  dropped: ${missed} vsyncs missed in ${run.frames.length + missed} (${((100 * missed) / (run.frames.length + missed)).toFixed(1)} %), in ${dropped} late frames; ${run.frames.filter((t) => t > 2.5 * vsync).length} frames missed two or more`,
  );
  console.log(
    `  frame time ms: p50 ${f(percentile(sorted, 50))}, p95 ${f(percentile(sorted, 95))}, p99 ${f(percentile(sorted, 99))}, max ${f(sorted.at(-1) ?? NaN)}`,
  );
  const idleSorted = [...idle].sort((a, b) => a - b);
  console.log(
    `  the same page idle (no scrolling), for comparison: p50 ${f(percentile(idleSorted, 50))}, p95 ${f(percentile(idleSorted, 95))}, p99 ${f(percentile(idleSorted, 99))} ms`,
  );
  const perFrame = (name: string) => f(((metrics[name]! - before[name]!) * 1_000) / run.frames.length);
  console.log(
    `  main-thread work per frame (CDP): script ${perFrame('ScriptDuration')} ms, style ${perFrame('RecalcStyleDuration')} ms, layout ${perFrame('LayoutDuration')} ms, all tasks ${perFrame('TaskDuration')} ms`,
  );
  console.log(
    `  JS heap: ${(run.heapBefore / 1_048_576).toFixed(1)} MB before, ${(run.heapAfter / 1_048_576).toFixed(1)} MB after; CDP JSHeapUsedSize ${(metrics.JSHeapUsedSize! / 1_048_576).toFixed(1)} MB, DOM nodes ${metrics.Nodes}, layouts ${metrics.LayoutCount}, style recalcs ${metrics.RecalcStyleCount}`,
  );
}

/** The functions with the most self time in a CPU profile, as "name (file) share". */
function hotspots(profile: { nodes: Array<{ id: number; callFrame: { functionName: string; url: string }; hitCount?: number }> }, top = 8): string {
  const byName = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    const { functionName, url } = node.callFrame;
    if (!hits || functionName === '(idle)' || functionName === '(program)') continue;
    total += hits;
    const name = `${functionName || '(anonymous)'}${url ? ` (${url.split('/').pop()})` : ''}`;
    byName.set(name, (byName.get(name) ?? 0) + hits);
  }
  return [...byName]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, hits]) => `${name} ${((hits / total) * 100).toFixed(0)}%`)
    .join(', ');
}

const state = mkdtempSync(path.join(tmpdir(), 'tether-web-bench-'));
const web = path.join(state, 'web');
console.log('Building the web app and bundling the Worker…');
buildWeb({ quiet: true, outDir: web });
ensureChromium();
const relay = await startLocalRelay({
  persistTo: state,
  assets: web,
  script: bundleWorker(path.join(state, 'worker'), web),
  vars: {
    TETHER_SIGNING_KEYS: JSON.stringify([await generateSigningKey('bench')]),
    TETHER_SETUP_SECRET: SETUP_SECRET,
    RATE_FRAMES: '100000/60',
    RATE_FRAMES_USER: '100000/60',
  },
  quiet: true,
});
const hostData = path.join(state, 'host');
let hostProcess: ReturnType<typeof spawn> | null = null;
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-dev-shm-usage',
    '--enable-precise-memory-info',
  ],
});
const channels: Array<{ close(): void }> = [];
try {
  const post = (route: string, body: unknown) =>
    fetch(`${relay.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const claimed = await post('/api/auth/setup', { ...OWNER, secret: SETUP_SECRET });
  if (claimed.status !== 201) throw new Error(`claiming the relay failed: ${claimed.status} ${await claimed.text()}`);
  await pairWithSetupSecret({ relayUrl: relay.url, secret: SETUP_SECRET, name: 'web-bench-host', dataDir: hostData });
  writeFileSync(path.join(hostData, 'bench-script.json'), JSON.stringify(script()));
  writeFileSync(
    path.join(hostData, 'config.json'),
    JSON.stringify({
      providers: { claude: { backend: 'script', script: 'bench-script.json' } },
      // The bench measures the web app's scrolling; its host is paired by the setup secret (no owner pinned), so it opts out.
      signatures: { require: false },
    }),
  );
  const host = spawn(process.execPath, [path.join(root, 'bin', 'tether.js'), 'host', 'start', '--data', hostData], { cwd: root, stdio: 'ignore' });
  hostProcess = host;

  const api = new RelayApi(relay.url);
  await api.signIn(OWNER.email, OWNER.password);
  const hostId = (await api.hosts())[0]!.id;
  const lobby = new HostConnection(api, hostId);
  channels.push(lobby);
  await until(() => lobby.online, 'the host online');
  const chatId = 'web-bench-5000';
  await lobby.request('chat.create', { chatId });
  const channel = new ChatChannel(api, hostId, chatId, { outbox: new MemoryOutboxStore() });
  channels.push(channel);
  await until(() => channel.state === 'open' && channel.thread.attached, 'the chat attached');
  let started = performance.now();
  await channel.send({ text: 'make five thousand items' }).settled;
  await until(() => channel.thread.items.some((i) => i.kind === 'turn' && i.state !== 'running'), 'the long turn settled');
  console.log(`The host made a ${channel.thread.items.length.toLocaleString()}-item chat in ${((performance.now() - started) / 1_000).toFixed(1)} s`);
  channel.close();

  const signedIn = await (await post('/api/auth/signin', { email: OWNER.email, password: OWNER.password })).json();
  const profiles = [
    ['Desktop (1280×800), CPU unthrottled', 1],
    ['Phone size (390×844), CPU slowed 4×', 4],
  ] as const;
  // WEB_SCROLL_PROFILE=desktop or phone runs just that one.
  const only = process.env.WEB_SCROLL_PROFILE;
  for (const [label, throttle] of profiles.filter(([, t]) => !only || (only === 'phone') === t > 1)) {
    const phone = throttle > 1;
    const context = await browser.newContext(
      phone
        ? { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, baseURL: relay.url }
        : { viewport: { width: 1280, height: 800 }, baseURL: relay.url },
    );
    await context.addInitScript((session) => localStorage.setItem('tether.session', JSON.stringify(session)), signedIn);
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    if (throttle > 1) await cdp.send('Emulation.setCPUThrottlingRate', { rate: throttle });
    started = performance.now();
    await page.goto(`/hosts/${hostId}/chats/${chatId}`);
    await page.locator('.thread-row').first().waitFor({ timeout: 120_000 });
    const firstRows = performance.now() - started;
    // Every older page, by scrolling to the top as a person would, until the chat's start shows.
    started = performance.now();
    await page.evaluate(
      () =>
        new Promise<void>((resolve) => {
          const el = document.querySelector<HTMLElement>('.thread-scroll')!;
          const step = () => {
            if (document.querySelector('.thread-edge')?.textContent?.includes('Start of the chat')) return resolve();
            el.scrollTop = 0;
            setTimeout(step, 30);
          };
          step();
        }),
    );
    const loaded = performance.now() - started;
    const rows = await page.evaluate(() => document.querySelectorAll('.thread-row').length);
    console.log(
      `\n${label}: first rows drawn ${firstRows.toFixed(0)} ms after navigation; every older page loaded by scrolling up in ${(loaded / 1_000).toFixed(1)} s (${rows} rows in the DOM)`,
    );
    await page.waitForTimeout(500);
    const idle = await idleFrames(page);
    const read = async (): Promise<Metrics> => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
    const before = await read();
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 1_000 });
    await cdp.send('Profiler.start');
    const run = await scrollDown(page, STEP_PX);
    const { profile } = await cdp.send('Profiler.stop');
    report(`${label}: scroll top to bottom, ${STEP_PX} px per frame`, run, await read(), before, idle);
    console.log(`  where the script time goes (sampled, self time): ${hotspots(profile)}`);
    const beforeReading = await read();
    const reading = await scrollDown(page, READING_PX, READING_FRAMES);
    report(`${label}: reading pace, ${READING_PX} px per frame from the top`, reading, await read(), beforeReading, idle);
    await context.close();
  }
} finally {
  for (const channel of channels) channel.close();
  await browser.close();
  if (hostProcess && hostProcess.exitCode === null) {
    const exited = new Promise((resolve) => hostProcess!.once('exit', resolve));
    hostProcess.kill('SIGTERM');
    await exited;
  }
  await relay.stop();
  rmSync(state, { recursive: true, force: true });
}
