// What the real Gemini CLI (0.61, `gemini --acp`) and Copilot CLI (1.0.102, `copilot --acp`) read on
// their own from a message, through the host, against the scripted model servers (which record every
// request: a file's content there is a file the CLI read and sent). Over ACP neither expands `@path`
// in a prompt's text (Gemini's ACP server turns only `resource_link`/`resource` blocks into file
// reads; Copilot none that the text names), so the text goes as is and no secret outside the
// chat's folder reaches the model. The files the host hands over (uploads, as resource links, in
// the chat's own uploads folder, checked by chats/file-reads.ts) Gemini reads; Copilot drops them.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { CopilotProvider } from '../../src/host/providers/copilot/index.ts';
import { geminiProvider } from '../../src/host/providers/gemini/index.ts';
import type { Provider } from '../../src/host/providers/provider.ts';
import { AnthropicServer } from '../support/anthropic-server.ts';
import { GeminiServer } from '../support/gemini-server.ts';
import { copilotEnv, copilotScenario } from './fixtures/copilot/scenario.ts';
import { geminiScenario, geminiTestEnv, TEST_MODEL as GEMINI_MODEL, writeGeminiHome } from './fixtures/gemini/scenario.ts';
import { openCore, TestClient, tempDir, until } from './harness.ts';

const bin = (name: string) => path.resolve(import.meta.dirname, '../../node_modules/.bin', name);
const TURN_MS = 60_000;

interface Cli {
  name: string;
  provider(data: string, home: string): Promise<{ provider: Provider; sent: () => string; close: () => Promise<void> }>;
  create: Record<string, unknown>;
  /** Whether it reads a `resource_link` to a file and sends its content. */
  readsLinks: boolean;
}

const CLIS: Cli[] = [
  {
    name: 'Copilot CLI 1.0.102',
    create: { provider: 'copilot' },
    readsLinks: false,
    async provider(_data, home) {
      const model = await AnthropicServer.start({ reply: copilotScenario });
      const provider = new CopilotProvider({ command: bin('copilot'), env: copilotEnv(model.url, home), clientVersion: '0.0.0' });
      return { provider, sent: () => JSON.stringify(model.requests.map((r) => r.body)), close: () => model.close() };
    },
  },
  {
    name: 'Gemini CLI 0.61',
    create: { provider: 'gemini', selection: { model: GEMINI_MODEL, options: {} } },
    readsLinks: true,
    async provider(_data, home) {
      const model = await GeminiServer.start(geminiScenario);
      writeGeminiHome(home);
      const provider = geminiProvider({ command: bin('gemini'), home, env: geminiTestEnv(model.url, home), clientVersion: '0.0.0' });
      return { provider, sent: () => JSON.stringify(model.requests.map((r) => r.body)), close: () => model.close() };
    },
  },
];

for (const cli of CLIS) {
  describe(`${cli.name} over ACP: what a message makes it read`, { timeout: 180_000 }, () => {
    let data: ReturnType<typeof tempDir>;
    let core: HostCore;
    let client: TestClient;
    let sent: () => string;
    let close: () => Promise<void>;
    let home: string;
    let work: string;
    let outside: string;

    beforeAll(async () => {
      data = tempDir('tether-acp-reads-');
      home = path.join(data.dir, 'home');
      work = path.join(data.dir, 'work');
      outside = path.join(data.dir, 'outside');
      for (const folder of [home, path.join(work, 'chat'), outside]) mkdirSync(folder, { recursive: true });
      const made = await cli.provider(data.dir, home);
      ({ sent, close } = made);
      core = await openCore(data.dir, { providers: [made.provider], policy: new HostPolicy({ home: data.dir, roots: [work] }) });
      client = new TestClient(core);
      await client.ok('chat.create', { chatId: 'c', cwd: path.join(work, 'chat'), runtimeMode: 'supervised', ...cli.create });
      await client.attach('c');
    }, 60_000);

    afterAll(async () => {
      await core?.close();
      await close?.();
      data?.cleanup();
    });

    const settled = (turnId: string) =>
      until(
        () => {
          const turn = client.threads.get('c')!.get(turnId);
          return turn?.kind === 'turn' && turn.state !== 'running';
        },
        `turn ${turnId}`,
        TURN_MS,
      );

    it('@ forms naming a secret outside the folder are plain text to it: the send goes through and the secret never reaches the model', async () => {
      writeFileSync(path.join(outside, 'secret.txt'), 'M-ACP-ABSOLUTE\n');
      writeFileSync(path.join(home, 'home-secret.txt'), 'M-ACP-HOME\n');
      const text = [`hello, read @${outside}/secret.txt`, '@../../outside/secret.txt', '@~/home-secret.txt', `@"${outside}/secret.txt"`, `@${outside}`].join(
        '\n',
      );
      const { turnId } = await client.ok('chat.send', { chatId: 'c', text });
      await settled(turnId);
      expect(client.threads.get('c')!.get(turnId)).toMatchObject({ state: 'done' });
      // The model got the words, not the files.
      expect(sent()).toContain('home-secret.txt');
      expect(sent()).not.toContain('M-ACP-ABSOLUTE');
      expect(sent()).not.toContain('M-ACP-HOME');
    });

    it.runIf(cli.name.startsWith('Gemini'))('its own /extensions and /restore commands are refused (bad-request) and install nothing', async () => {
      const extension = path.join(outside, 'evil-extension');
      mkdirSync(extension, { recursive: true });
      writeFileSync(
        path.join(extension, 'gemini-extension.json'),
        JSON.stringify({ name: 'evil', version: '1.0.0', mcpServers: { evil: { command: 'touch', args: [path.join(outside, 'ran')] } } }),
      );
      for (const text of [`/extensions link ${extension}`, `  $extensions install ${extension}`, '/restore', '/ extensions link x']) {
        const reply = await client.request('chat.send', { chatId: 'c', text });
        expect(reply.ok, text).toBe(false);
        if (!reply.ok) expect(reply.error).toMatchObject({ code: 'bad-request', message: expect.stringMatching(/\/(extensions|restore)/) });
      }
      expect(existsSync(path.join(home, '.gemini', 'extensions', 'evil'))).toBe(false);
      // Text that only starts with a slash is a message like any other.
      const { turnId } = await client.ok('chat.send', { chatId: 'c', text: '/usr/bin is where hello lives' });
      await settled(turnId);
      expect(client.threads.get('c')!.get(turnId)).toMatchObject({ state: 'done' });
    });

    it('an upload, handed over as a resource link, is what it reads (Gemini) or drops (Copilot)', async () => {
      const data64 = Buffer.from('M-ACP-UPLOAD inside\n').toString('base64');
      const { turnId } = await client.ok('chat.send', {
        chatId: 'c',
        text: 'hello, here is a file',
        attachments: [{ name: 'note.txt', mime: 'text/plain', data: data64 }],
      });
      // Gemini asks before it reads a linked file outside its workspace (the uploads folder is).
      await until(
        () => {
          const items = client.threads.get('c')!.items.filter((i) => i.turnId === turnId);
          const approval = items.find((i) => i.kind === 'approval' && i.decision === 'pending');
          if (approval?.kind === 'approval') void client.request('chat.approve', { chatId: 'c', requestId: approval.requestId, decision: 'allow' });
          const turn = client.threads.get('c')!.get(turnId);
          return turn?.kind === 'turn' && turn.state !== 'running';
        },
        'the upload turn',
        TURN_MS,
      );
      expect(client.threads.get('c')!.get(turnId)).toMatchObject({ state: 'done' });
      // Gemini reads the linked upload and sends it; Copilot 1.0.102 drops a resource link (neither
      // its content nor its name reaches the model), so no file is read for it either.
      expect(sent().includes('M-ACP-UPLOAD')).toBe(cli.readsLinks);
    });
  });
}
