// What the real Codex (the pinned 0.171, `codex app-server`) reads on its own from a message, through
// the host, against the scripted Responses server (which records every request: a file's content
// there is a file the CLI read and sent). Codex takes a turn's input as items; the host sends the
// text item as is and `localImage` items only for its own uploads (checked by chats/file-reads.ts).
// Codex expands no `@path` in a text item, so a secret outside the chat's folder named there never
// reaches the model; an uploaded image, read by Codex from its path, does.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { CodexProvider } from '../../src/host/providers/codex/index.ts';
import { OpenAiServer } from '../support/openai-server.ts';
import { codexScenario, TEST_KEY_VARIABLE, writeCodexHome } from './fixtures/codex/scenario.ts';
import { openCore, TestClient, tempDir, TINY_PNG, until } from './harness.ts';

const codex = path.resolve(import.meta.dirname, '../../node_modules/.bin/codex');

let data: ReturnType<typeof tempDir>;
let model: OpenAiServer;
let core: HostCore;
let client: TestClient;
let home = '';
let outside = '';

const sent = () => JSON.stringify(model.requests.map((r) => r.body));
const settled = (turnId: string) =>
  until(
    () => {
      const turn = client.threads.get('c')!.get(turnId);
      return turn?.kind === 'turn' && turn.state !== 'running';
    },
    `turn ${turnId}`,
    60_000,
  );

beforeAll(async () => {
  data = tempDir('tether-codex-reads-');
  model = await OpenAiServer.start(codexScenario);
  home = path.join(data.dir, 'codex-home');
  const work = path.join(data.dir, 'work');
  outside = path.join(data.dir, 'outside');
  for (const folder of [home, path.join(work, 'chat'), outside]) mkdirSync(folder, { recursive: true });
  writeCodexHome(home, model.url);
  const provider = new CodexProvider({ command: codex, home, env: { [TEST_KEY_VARIABLE]: 'k' }, clientVersion: '0.0.0' }, { probe: false });
  core = await openCore(data.dir, { providers: [provider], policy: new HostPolicy({ home: data.dir, roots: [work] }) });
  client = new TestClient(core);
  await client.ok('chat.create', { chatId: 'c', provider: 'codex', cwd: path.join(work, 'chat'), runtimeMode: 'supervised' });
  await client.attach('c');
}, 30_000);

afterAll(async () => {
  await core?.close();
  await model?.close();
  data?.cleanup();
});

describe('Codex 0.171: what a message makes it read', { timeout: 120_000 }, () => {
  it('@ forms naming a secret outside the folder stay text: the secret never reaches the model', async () => {
    writeFileSync(path.join(outside, 'secret.txt'), 'M-CODEX-ABSOLUTE\n');
    writeFileSync(path.join(home, 'home-secret.txt'), 'M-CODEX-HOME\n');
    const text = [
      `hello there, read @${outside}/secret.txt`,
      '@../../outside/secret.txt',
      `@"${outside}/secret.txt"`,
      '@~/home-secret.txt',
      `@${outside}`,
    ].join('\n');
    const { turnId } = await client.ok('chat.send', { chatId: 'c', text });
    await settled(turnId);
    expect(client.threads.get('c')!.get(turnId)).toMatchObject({ state: 'done' });
    expect(sent()).toContain('home-secret.txt');
    expect(sent()).not.toContain('M-CODEX-ABSOLUTE');
    expect(sent()).not.toContain('M-CODEX-HOME');
  });

  it("an uploaded image, a local image path in the host's uploads folder, reaches the model", async () => {
    const { turnId } = await client.ok('chat.send', {
      chatId: 'c',
      text: 'hello there',
      attachments: [{ name: 'dot.png', mime: 'image/png', data: TINY_PNG }],
    });
    await settled(turnId);
    expect(client.threads.get('c')!.get(turnId)).toMatchObject({ state: 'done' });
    expect(sent()).toContain('"type":"input_image"');
  });

  it('a queued message whose attachment path leads outside (a record changed on disk) fails its turn folder-denied; Codex is handed nothing', async () => {
    const file = path.join(outside, 'secret.png');
    writeFileSync(file, Buffer.from(TINY_PNG, 'base64'));
    const session = core.session('c');
    const asked = model.requests.length;
    session.updateInfo({
      queue: [
        {
          id: 'queued-x',
          turnId: 'turn-x',
          createdAt: Date.now(),
          text: 'hello there',
          attachments: [{ id: 'att-x', name: 'secret.png', mime: 'image/png', size: 70, path: file }],
        },
      ],
    });
    session.deliverNext();
    await settled('turn-x');
    expect(client.threads.get('c')!.get('turn-x')).toMatchObject({ state: 'error' });
    const note = client.threads.get('c')!.items.find((i) => i.kind === 'note' && i.turnId === 'turn-x');
    expect(note).toMatchObject({ level: 'error', text: expect.stringContaining('secret.png') });
    expect(model.requests.length).toBe(asked);
  });
});
