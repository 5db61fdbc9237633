// The relay's chat index (D1 `chats`): a chat's title and last line there follow the host's info as it
// changes, not only as it was at create, so lists across hosts (GET /api/chats) and a lobby's
// chat.list while the host is offline show the title and the last line the chat has now.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { Client, FakeHost, OWNER, infoFor, until } from './peers.ts';
import { api, signIn } from './people.ts';
import type { ChatLastLine } from '../../src/contracts/index.ts';

const titleInD1 = async (hostId: string, chatId: string) =>
  (await env.DB.prepare('SELECT title FROM chats WHERE host_id = ? AND chat_id = ?').bind(hostId, chatId).first<{ title: string | null }>())?.title;

describe('the chat index', () => {
  it("keeps each chat's title as its latest info says, for lists across hosts and while the host is away", async () => {
    const host = await new FakeHost('host-index-titles').connect();
    const owner = await signIn(OWNER);
    const lobby = await Client.lobby(host.hostId);
    expect((await lobby.request('chat.create', { chatId: 't1' })).ok).toBe(true);
    await until(async () => (await titleInD1(host.hostId, 't1')) === null, 'indexed at create, untitled');

    // The host named it after its first message, then the agent named it: each status moves the index.
    for (const title of ['Fix the flaky test', "The agent's own title"]) {
      host.sendEvent('chat.status', { chatId: 't1', info: infoFor('t1', { suggestedTitle: title, status: 'running' }) });
      await until(async () => (await titleInD1(host.hostId, 't1')) === title, `the index titled "${title}"`);
      const listed = (await api(owner, 'GET', '/api/chats')).body.chats.find((c: any) => c.hostId === host.hostId && c.info.chatId === 't1');
      expect(listed.info.suggestedTitle).toBe(title);
    }

    host.disconnect();
    await until(async () => !(await env.HOST_LINK.get(env.HOST_LINK.idFromName(host.hostId)).isOnline()), 'host offline');
    const offline = await lobby.request('chat.list', {});
    expect(offline.result.chats.find((c: any) => c.chatId === 't1').suggestedTitle).toBe("The agent's own title");
  });

  it("keeps each chat's last line as its latest status says, listed across hosts and while the host is away", async () => {
    const host = await new FakeHost('host-index-lines').connect();
    const owner = await signIn(OWNER);
    const lobby = await Client.lobby(host.hostId);
    expect((await lobby.request('chat.create', { chatId: 'l1' })).ok).toBe(true);
    const listed = async () => (await api(owner, 'GET', '/api/chats')).body.chats.find((c: any) => c.hostId === host.hostId && c.info.chatId === 'l1');
    await until(async () => (await listed()) !== undefined, 'indexed at create');
    expect((await listed()).info.lastLine).toBeUndefined();

    const lines: ChatLastLine[] = [
      { role: 'user', text: 'Fix the flaky test', at: 1_700_000_000_000 },
      { role: 'assistant', text: 'All 42 tests pass now.', at: 1_700_000_060_000 },
    ];
    for (const lastLine of lines) {
      host.sendEvent('chat.status', { chatId: 'l1', info: infoFor('l1', { lastLine, status: 'idle' }) });
      await until(async () => (await listed())?.info.lastLine?.text === lastLine.text, `the index's last line "${lastLine.text}"`);
      expect((await listed()).info.lastLine).toEqual(lastLine);
    }

    host.disconnect();
    await until(async () => !(await env.HOST_LINK.get(env.HOST_LINK.idFromName(host.hostId)).isOnline()), 'host offline');
    const offline = await lobby.request('chat.list', {});
    expect(offline.result.chats.find((c: any) => c.chatId === 'l1').lastLine).toEqual(lines[1]);
  });
});
