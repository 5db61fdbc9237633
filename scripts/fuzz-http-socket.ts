// `node scripts/fuzz-http-socket.ts`: the fuzz suite's hostile HTTP requests (test/support/hostile-requests.ts,
// the same seed and order as test/relay/fuzz.test.ts) against a real `wrangler dev` over a socket
// (node:http, six at a time), with its own fresh state folder. It is what told the Worker apart from
// the vitest pool's SELF when the in-workerd run slowed down with every request (docs/fuzz-and-chaos.md):
// it prints the mean answer time over requests 1–100, 901–1,000, 2,901–3,000 and the last
// 100, answers by status, and every 5xx or error without a {code, message}. TETHER_FUZZ_FRAMES
// requests (10,000 unless set), TETHER_FUZZ_SEED (18). Exits non-zero when a 5xx came from the Worker.
import http from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateSigningKey } from '../src/relay/auth/keys.ts';
import { Rng } from '../test/support/hostile-frames.ts';
import { hostileRequests, type HostileRequest } from '../test/support/hostile-requests.ts';
import { bundleWorker, startLocalRelay } from './local-relay.ts';

const count = Number(process.env.TETHER_FUZZ_FRAMES || 10_000);
const seed = Number(process.env.TETHER_FUZZ_SEED || 18);
const state = mkdtempSync(path.join(tmpdir(), 'tether-fuzz-http-'));
const web = path.join(state, 'web');
mkdirSync(web);
writeFileSync(path.join(web, 'index.html'), '<!doctype html><title>Tether</title>');
const secret = crypto.randomUUID();
const relay = await startLocalRelay({
  persistTo: state,
  assets: web,
  script: bundleWorker(path.join(state, 'worker'), web),
  quiet: true,
  vars: { TETHER_SIGNING_KEYS: JSON.stringify([await generateSigningKey('fuzz')]), TETHER_SETUP_SECRET: secret, APP_ORIGINS: 'https://app.tether.test' },
});

interface Answer {
  status: number;
  body: string;
}

/** One request as a client sends it; an upgrade the relay accepts answers 101 and is closed at once. */
function send({ method, path: target, headers, body }: HostileRequest): Promise<Answer> {
  const bytes = body === null ? null : Buffer.from(body as string | Uint8Array);
  return new Promise((resolve, reject) => {
    const url = new URL(relay.url);
    const req = http.request(
      { agent: false, host: url.hostname, port: url.port, method, path: target, headers: { ...headers, ...(bytes ? { 'content-length': bytes.length } : {}) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (text.length < 2000) text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve({ status: 101, body: '' });
    });
    req.on('error', reject);
    req.end(bytes ?? undefined);
  });
}

try {
  // The relay's owner, claimed here: a real token, of a person who has no host on this relay.
  const claimed = await fetch(`${relay.url}/api/auth/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'fuzz-owner@fuzz.test', password: 'fuzz-owner-password-0123', name: 'Fuzz owner', secret }),
  });
  const { accessToken } = (await claimed.json()) as { accessToken: string };
  const requests = hostileRequests(new Rng(seed + 3), count, { hostId: 'fuzz-host', chatId: 'baseline', intruderToken: accessToken, subjectId: 'owner-1' });
  const took: number[] = [];
  const statuses: Record<string, number> = {};
  const anomalies: string[] = [];
  let sent = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: 6 }, async () => {
      for (let next = requests.next(); !next.done; next = requests.next()) {
        const request = next.value;
        const index = sent++;
        const at = performance.now();
        let answer: Answer;
        try {
          answer = await send(request);
        } catch (error) {
          anomalies.push(`${request.what}: ${String(error)}`);
          continue;
        } finally {
          took[index] = performance.now() - at;
        }
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        if (answer.status < 400) continue;
        let parsed: { code?: unknown; message?: unknown } = {};
        try {
          parsed = Object(JSON.parse(answer.body)) as typeof parsed;
        } catch {
          // not JSON
        }
        if (answer.status >= 500 || typeof parsed.code !== 'string' || typeof parsed.message !== 'string') {
          anomalies.push(
            `${request.what} (${request.body === null ? 'no body' : `${Buffer.from(request.body as string | Uint8Array).length} B body`}): ${answer.status} ${answer.body.slice(0, 160).replace(/\s+/g, ' ')}`,
          );
        }
      }
    }),
  );
  const mean = (from: number, to: number) => {
    const window = took.slice(from, to).filter((ms) => ms !== undefined);
    return window.length ? `${(window.reduce((a, b) => a + b, 0) / window.length).toFixed(1)} ms` : '-';
  };
  console.log(`fuzz over a socket: seed ${seed}, ${sent} requests to wrangler dev in ${Math.round((Date.now() - started) / 1000)} s`);
  console.log(
    `  mean answer time: requests 1-100 ${mean(0, 100)}, 901-1,000 ${mean(900, 1000)}, 2,901-3,000 ${mean(2900, 3000)}, last 100 ${mean(sent - 100, sent)}`,
  );
  console.log(
    `  answers: ${Object.entries(statuses)
      .map(([status, n]) => `${status} ${n}`)
      .join(', ')}`,
  );
  // wrangler dev's own proxy (miniflare's entry worker) answers 500 "Network connection lost" now and
  // then, each time seen for a DELETE with a 100 KB or 1 MB body, six requests at once (not reproduced
  // one at a time; cause not known): its text names the proxy, so it is counted apart from the Worker's.
  const proxy = anomalies.filter((a) => a.includes('Network connection lost') && a.includes('entry.worker.js'));
  const worker = anomalies.filter((a) => !proxy.includes(a));
  console.log(`  ${worker.length} anomalies from the Worker; ${proxy.length} 500s from wrangler dev's proxy (Network connection lost)`);
  for (const a of [...worker, ...proxy].slice(0, 20)) console.log(`    ${a}`);
  process.exitCode = worker.length === 0 ? 0 : 1;
} finally {
  await relay.stop();
  rmSync(state, { recursive: true, force: true });
}
