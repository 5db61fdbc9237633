// `node bench/signing.bench.ts` (part of `npm run bench`): what a device signature costs per request
// that acts on a machine (issue 15). In Node: a device signing a `chat.send` (canonical JSON of the
// payload, its SHA-256, the statement's canonical JSON, Ed25519), and the host verifying it (the
// whole RequestVerifier.check: shape, digest, trusted device, signature, freshness, replay, role). In
// Chromium: the same signing code (src/client/device-key.ts, bundled) with a non-extractable key, as
// the web app signs. Reads are never signed, so they cost nothing here.
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { deviceKeyOf, newDeviceKeyPair, signRequest } from '../src/client/device-key.ts';
import { TrustBook } from '../src/host/trust/book.ts';
import { RequestVerifier } from '../src/host/trust/verify.ts';
import { CHROMIUM, ensureChromium } from '../scripts/chromium.ts';

const N = 2_000;
const TEXT = 'Please look at src/relay/objects/chat-room.ts and explain the fan-out. '.repeat(14); // ~1 KB
const frameOf = (i: number) => ({ id: `r-${i}`, type: 'chat.send', payload: { chatId: 'chat-1', text: TEXT, attachments: [] } });

function perOp(label: string, totalMs: number, n: number): void {
  console.log(`${label.padEnd(44)} ${((totalMs / n) * 1000).toFixed(0).padStart(6)} µs per request  (${n} runs)`);
}

async function node(): Promise<void> {
  const key = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
  const book = await TrustBook.open('host-1', { userId: 'ada', name: 'Ada', device: { id: key.id, publicKey: key.publicKey } });
  const verifier = new RequestVerifier({ book, view: { chat: () => ({ provider: 'claude' }), settled: () => null } });
  const frames = Array.from({ length: N }, (_, i) => frameOf(i));
  for (let i = 0; i < 200; i++) await signRequest(key, frameOf(-i - 1), { hostId: 'host-1' }); // warm-up
  let started = performance.now();
  const signatures = [];
  for (const frame of frames) signatures.push(await signRequest(key, frame, { hostId: 'host-1' }));
  perOp('Node: sign a chat.send (1 KB text)', performance.now() - started, N);
  started = performance.now();
  for (let i = 0; i < N; i++) {
    const verdict = await verifier.check(frames[i], signatures[i]);
    if (!verdict.ok) throw new Error(`bench verification failed: ${verdict.error.message}`);
  }
  perOp('Node: host verifies it (RequestVerifier.check)', performance.now() - started, N);
}

async function browser(): Promise<void> {
  ensureChromium();
  const bundle = await build({
    stdin: {
      contents: `import { deviceKeyOf, newDeviceKeyPair, signRequest } from './src/client/device-key.ts'; import { settledRequestDigest } from './src/contracts/signing.ts'; globalThis.bench = { deviceKeyOf, newDeviceKeyPair, signRequest, settledRequestDigest };`,
      resolveDir: process.cwd(),
      loader: 'ts',
    },
    bundle: true,
    format: 'iife',
    write: false,
    platform: 'browser',
  });
  const b = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await b.newPage();
    // WebCrypto needs a secure context: an https page answered by the bench itself, no network.
    await page.route('https://bench.tether.test/**', (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>bench</title>' }));
    await page.goto('https://bench.tether.test/');
    await page.addScriptTag({ content: bundle.outputFiles[0].text });
    const [send, approve] = await page.evaluate(
      async ({ n, text }) => {
        const { deviceKeyOf, newDeviceKeyPair, signRequest, settledRequestDigest } = (
          globalThis as never as {
            bench: typeof import('../src/client/device-key.ts') & Pick<typeof import('../src/contracts/signing.ts'), 'settledRequestDigest'>;
          }
        ).bench;
        const key = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
        const frame = (i: number) => ({ id: `r-${i}`, type: 'chat.send', payload: { chatId: 'chat-1', text, attachments: [] } });
        for (let i = 0; i < 200; i++) await signRequest(key, frame(-i - 1), { hostId: 'host-1' });
        let started = performance.now();
        for (let i = 0; i < n; i++) await signRequest(key, frame(i), { hostId: 'host-1' });
        const sendMs = performance.now() - started;
        // An approval also names the request it settles: the digest of the tool and input as shown.
        const shown = { kind: 'approval' as const, requestId: 'perm-1', toolName: 'Bash', input: { command: 'npm test', description: 'Run the test suite' } };
        started = performance.now();
        for (let i = 0; i < n; i++) {
          const settles = await settledRequestDigest(shown);
          await signRequest(
            key,
            { id: `a-${i}`, type: 'chat.approve', payload: { chatId: 'chat-1', requestId: 'perm-1', decision: 'allow' } },
            { hostId: 'host-1', settles },
          );
        }
        return [sendMs, performance.now() - started];
      },
      { n: N, text: TEXT },
    );
    perOp(`Chromium: sign a chat.send (non-extractable key)`, send, N);
    perOp(`Chromium: sign a chat.approve (+ settled digest)`, approve, N);
  } finally {
    await b.close();
  }
}

await node();
await browser();
