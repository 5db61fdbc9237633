// One chat on the real `codex app-server` (pinned @openai/codex) inside a HostCore, its model the
// scripted Responses server on loopback (fixtures/codex/scenario.ts): what the Codex host tests start from.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { RuntimeMode } from '../../src/contracts/index.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { CodexProvider } from '../../src/host/providers/codex/index.ts';
import { OpenAiServer } from '../support/openai-server.ts';
import { codexScenario, TEST_KEY_VARIABLE, writeCodexHome } from './fixtures/codex/scenario.ts';
import { openCore, TestClient, tempDir } from './harness.ts';

export const CODEX_BIN = path.resolve(import.meta.dirname, '../../node_modules/.bin/codex');

export interface CodexChat {
  core: HostCore;
  client: TestClient;
  model: OpenAiServer;
  /** The chat's CODEX_HOME and folder. */
  home: string;
  work: string;
  close: () => Promise<void>;
}

/** Chat `c` in a new work folder, in `runtimeMode` (the host's ceiling raised to it), attached; `args` after `app-server`. */
export async function openCodexChat(prefix: string, runtimeMode: RuntimeMode = 'auto-accept-edits', args: string[] = []): Promise<CodexChat> {
  const data = tempDir(prefix);
  const model = await OpenAiServer.start(codexScenario);
  const home = path.join(data.dir, 'codex-home');
  const work = path.join(data.dir, 'work');
  mkdirSync(home, { recursive: true });
  mkdirSync(work, { recursive: true });
  writeCodexHome(home, model.url);
  const provider = new CodexProvider({ command: CODEX_BIN, home, env: { [TEST_KEY_VARIABLE]: 'k' }, clientVersion: '0.0.0', args }, { probe: false });
  const core = await openCore(data.dir, {
    providers: [provider],
    policy: new HostPolicy({ home: data.dir, modeCeiling: runtimeMode === 'full-access' ? 'full-access' : undefined }),
  });
  const client = new TestClient(core);
  await client.ok('chat.create', { chatId: 'c', provider: 'codex', cwd: work, runtimeMode });
  await client.attach('c');
  return {
    core,
    client,
    model,
    home,
    work,
    close: async () => {
      await core.close();
      await model.close();
      data.cleanup();
    },
  };
}
