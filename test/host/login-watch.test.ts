// accounts.watchLogin with the real CLIs: the host asks the account's CLI on a clock whether it is
// signed in (`codex login status`, `claude auth status`) and every client hears accounts.changed
// when the answer moves; the person signs in meanwhile with the real `codex login --with-api-key`.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderAccounts } from '../../src/contracts/index.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { ClaudeProvider } from '../../src/host/providers/claude/index.ts';
import { CodexProvider } from '../../src/host/providers/codex/index.ts';
import { CLAUDE_BIN } from './claude-scenario.ts';
import { openCore, TestClient, tempDir, until } from './harness.ts';

const CODEX_BIN = path.resolve(import.meta.dirname, '../../node_modules/.bin/codex');

let data: ReturnType<typeof tempDir>;
let homes: ReturnType<typeof tempDir>;
let core: HostCore;
let client: TestClient;
let codexHome = '';

const statusOf = (frame: { payload: unknown } | undefined, id: string) => (frame?.payload as ProviderAccounts | undefined)?.statuses.find((s) => s.id === id);

beforeAll(async () => {
  data = tempDir('tether-login-');
  homes = tempDir('tether-login-homes-');
  codexHome = path.join(homes.dir, 'codex');
  mkdirSync(codexHome, { recursive: true });
  const claudeEnv = {
    CLAUDE_CONFIG_DIR: path.join(homes.dir, 'claude'),
    HOME: homes.dir,
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  core = await openCore(data.dir, {
    providers: [
      new ClaudeProvider({ command: CLAUDE_BIN, env: claudeEnv }),
      new CodexProvider({ command: CODEX_BIN, home: codexHome, env: { HOME: homes.dir }, clientVersion: '0.0.0' }, { probe: false }),
    ],
    policy: new HostPolicy({ home: data.dir }),
    loginIntervalMs: 100,
  });
  client = new TestClient(core);
}, 30_000);

afterAll(async () => {
  await core?.close();
  data?.cleanup();
  homes?.cleanup();
});

describe('accounts.watchLogin', { timeout: 90_000 }, () => {
  it('says what to run, sees the account signed out, then signed in once the person signs in, and stops', async () => {
    const snapshot = await client.ok<ProviderAccounts>('accounts.list', {});
    expect(snapshot.loginCommands).toEqual({ claude: 'claude auth login', codex: 'codex login' });
    expect(await client.ok('accounts.watchLogin', { id: 'codex' })).toEqual({});
    await until(() => statusOf(client.events('accounts.changed').at(-1), 'codex')?.state === 'signed-out', 'signed out', 30_000);
    expect(statusOf(client.events('accounts.changed').at(-1), 'codex')?.message).toMatch(/Not logged in/);

    // The person signs in with the real CLI, in the account's own folder.
    execFileSync(CODEX_BIN, ['login', '--with-api-key'], {
      input: 'sk-test-key\n',
      env: { ...process.env, CODEX_HOME: codexHome, HOME: homes.dir },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    await until(() => statusOf(client.events('accounts.changed').at(-1), 'codex')?.state === 'ready', 'signed in', 30_000);
    expect((await client.ok<ProviderAccounts>('accounts.list', {})).statuses.find((s) => s.id === 'codex')).toMatchObject({ state: 'ready' });
    // Signed in, the watch ended: the CLI is asked no more.
    expect(core.logins.watching('codex')).toBe(false);
  });

  it('asks Claude Code too (claude auth status): an account with no sign-in is signed out', async () => {
    await client.ok('accounts.watchLogin', { id: 'claude' });
    await until(() => statusOf(client.events('accounts.changed').at(-1), 'claude')?.state === 'signed-out', 'claude signed out', 30_000);
  });

  it('an account the host does not have is account-unavailable', async () => {
    expect(await client.fails('accounts.watchLogin', { id: 'nobody' })).toBe('account-unavailable');
  });
});
