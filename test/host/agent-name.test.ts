// A chat carries what its host calls the agent serving it (ChatInfo.agentName): the stand-in is
// "Demo agent (scripted)" in every list and header, though its kind is a real CLI's.
import { describe, expect, it, afterEach } from 'vitest';
import { HostPolicy } from '../../src/host/policy.ts';
import { DEMO_AGENT_NAME, ScriptProvider } from '../../src/host/providers/script.ts';
import { chatTitle } from '../../src/client/chat-title.ts';
import { TEST_SCRIPT, TestClient, openCore, tempDir } from './harness.ts';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('the agent a chat names', () => {
  it("is the serving provider's name, in chat.create, chat.list and chat.status, and after a restart under another", async () => {
    const { dir, cleanup } = tempDir('tether-agent-name-');
    cleanups.push(cleanup);
    const demo = new ScriptProvider({ kind: 'claude', script: TEST_SCRIPT, name: DEMO_AGENT_NAME });
    const core = await openCore(dir, { providers: [demo], policy: new HostPolicy({ home: dir }) });
    const client = new TestClient(core, 'phone', true);
    const made = await client.ok('chat.create', { chatId: 'c1' });
    expect(made).toMatchObject({ provider: 'claude', agentName: 'Demo agent (scripted)' });
    expect(chatTitle(made)).toMatch(/^Demo agent \(scripted\) in /);
    expect((await client.ok('chat.list', {})).chats[0]).toMatchObject({ agentName: 'Demo agent (scripted)' });
    await client.ok('chat.send', { chatId: 'c1', text: 'hello' });
    expect(client.statuses.get('c1')).toMatchObject({ agentName: 'Demo agent (scripted)' });
    client.release();
    await core.close();

    // The same chat, loaded by a host that serves that kind with another agent: named after the one serving it now.
    const other = await openCore(dir, { providers: [new ScriptProvider({ kind: 'claude', script: TEST_SCRIPT })], policy: new HostPolicy({ home: dir }) });
    cleanups.push(() => other.close());
    const again = new TestClient(other, 'phone', true);
    expect((await again.ok('chat.list', {})).chats[0]).toMatchObject({ chatId: 'c1', agentName: 'Claude Code (scripted)' });
  });

  it("falls back to its kind's name when a host says none (an older host)", () => {
    expect(chatTitle({ provider: 'codex', cwd: '/home/ada/app' })).toBe('Codex in app');
    expect(chatTitle({ provider: 'codex', cwd: '/home/ada/app', agentName: 'Codex (work account)' })).toBe('Codex (work account) in app');
  });
});
