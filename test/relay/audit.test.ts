// The audit log: every request that acts on a machine and every grant change, with who, which
// session, host and chat, and when; never message text; read by the host's owner a page at a time.
import { describe, expect, it } from 'vitest';
import { FakeHost, OWNER, approvalItem, until, userItem } from './peers.ts';
import { api, chatOf, grant, lobbyOf, signIn } from './people.ts';

describe('the audit log', () => {
  it('records machine-acting requests and grant changes without message text, newest first, paged, for the owner only', async () => {
    const host = await new FakeHost('host-audit-1').connect();
    host.create('a1', [userItem('u1', 'hi'), approvalItem('ap1', 'req-1')]);
    host.handlers['chat.approve'] = () => ({});
    host.handlers['accounts.list'] = () => ({ accounts: {} });
    const owner = await signIn(OWNER);
    const uma = await signIn('audit-uma');
    const vic = await signIn('audit-vic');
    const started = Date.now();
    await grant(owner, host.hostId, { type: 'user', id: uma.userId }, 'operator');
    await grant(owner, host.hostId, { type: 'user', id: vic.userId }, 'viewer');

    const ownerChat = await chatOf(owner, host.hostId, 'a1');
    const ownerLobby = await lobbyOf(owner, host.hostId);
    const umaChat = await chatOf(uma, host.hostId, 'a1');
    const vicChat = await chatOf(vic, host.hostId, 'a1');
    await ownerChat.client.request('chat.attach', { chatId: 'a1' });
    expect((await ownerChat.client.request('chat.send', { chatId: 'a1', text: 'the secret plan' })).ok).toBe(true);
    expect((await umaChat.client.request('chat.approve', { chatId: 'a1', requestId: 'req-1', decision: 'allow' })).ok).toBe(true);
    expect((await ownerLobby.client.request('accounts.list', {})).ok).toBe(true);
    // Reads and refused requests are not machine-acting records.
    await vicChat.client.request('chat.attach', { chatId: 'a1' });
    expect((await vicChat.client.request('chat.send', { chatId: 'a1', text: 'nope' })).error.code).toBe('forbidden');

    const path = `/api/hosts/${host.hostId}/audit`;
    let all: any[] = [];
    await until(async () => {
      all = (await api(owner, 'GET', `${path}?limit=100`)).body.entries;
      return all.length >= 5;
    }, 'the audit lines written off the frame path');
    expect(all.map((e) => [e.action, e.actor, e.chatId])).toEqual([
      ['accounts.list', OWNER, null],
      ['chat.approve', uma.userId, 'a1'],
      ['chat.send', OWNER, 'a1'],
      ['grant.created', OWNER, null],
      ['grant.created', OWNER, null],
    ]);
    for (const entry of all) {
      expect(entry.hostId).toBe(host.hostId);
      expect(entry.at).toBeGreaterThanOrEqual(started);
    }
    expect(all[1].sessionId).toBe(uma.sessionId);
    expect(all[2].sessionId).toBe(owner.sessionId);
    expect(all[3].detail).toMatchObject({ subjectType: 'user', subjectId: vic.userId, role: 'viewer' });
    expect(JSON.stringify(all)).not.toContain('secret plan');

    // Pages of two, newest first, end with next = null and hold exactly the whole log.
    const paged: any[] = [];
    let next: number | null | undefined;
    do {
      const page = await api(owner, 'GET', `${path}?limit=2${next ? `&before=${next}` : ''}`);
      expect(page.body.entries.length).toBeLessThanOrEqual(2);
      paged.push(...page.body.entries);
      next = page.body.next;
    } while (next !== null);
    expect(paged.map((e) => e.id)).toEqual(all.map((e) => e.id));
    expect([...paged.map((e) => e.id)].sort((a, b) => b - a)).toEqual(paged.map((e) => e.id));

    // Only whoever holds owner on the host reads it.
    expect((await api(uma, 'GET', path)).status).toBe(403);
    expect((await api(vic, 'GET', path)).status).toBe(403);
    expect((await api(null, 'GET', path)).status).toBe(401);
    expect((await api(owner, 'GET', `${path}?limit=1000`)).body).toMatchObject({ code: 'bad-request', message: expect.stringContaining('limit') });
  });

  it('records every request that starts work on the machine or makes a chat there, not only chat.send', async () => {
    const host = await new FakeHost('host-audit-2').connect();
    host.create('a2', [userItem('u1', 'hi')]);
    const acting = ['chat.uiChoice', 'chat.sendNow', 'chat.compact', 'chat.summarize', 'chat.fork', 'chat.continueOn', 'chat.stopTask', 'chat.stopSubagent'];
    for (const type of acting) host.handlers[type] = () => ({});
    const owner = await signIn(OWNER);
    const chat = await chatOf(owner, host.hostId, 'a2');
    const payloads: Record<string, Record<string, unknown>> = {
      'chat.uiChoice': { itemId: 'u1', blockId: 'b1', revision: 'r1', choiceId: 'c1' },
      'chat.sendNow': { messageId: 'm-1' },
      'chat.compact': {},
      'chat.summarize': {},
      'chat.fork': { turnId: 't1' },
      'chat.continueOn': { account: 'work' },
      'chat.stopTask': { taskId: 'task1' },
      'chat.stopSubagent': { toolUseId: 'tu1' },
    };
    for (const type of acting) expect((await chat.client.request(type, { chatId: 'a2', ...payloads[type] })).ok, type).toBe(true);

    let all: any[] = [];
    await until(async () => {
      all = (await api(owner, 'GET', `/api/hosts/${host.hostId}/audit?limit=100`)).body.entries;
      return all.length >= acting.length;
    }, 'the audit lines written off the frame path');
    expect(all.map((e) => [e.action, e.actor, e.chatId]).reverse()).toEqual(acting.map((type) => [type, OWNER, 'a2']));
  });
});
