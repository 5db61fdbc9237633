// Two answers to one approval at once (issue 18): the first wins and goes to the host; the second must
// be told the truth. When the winner cannot be delivered (the host went away before it answered) the
// request is open again, and the loser must not have been told it was settled.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { approvalItem, Client, FakeHost, until } from './peers.ts';

let hosts = 0;
const newHost = () => new FakeHost(`host-loser-${++hosts}`).connect();

async function pendingApproval(chatId: string, requestId: string) {
  const host = await newHost();
  host.create(chatId, []);
  const alice = await Client.chat(host.hostId, chatId);
  const phone = await Client.chat(host.hostId, chatId);
  await alice.request('chat.attach', { chatId });
  await phone.request('chat.attach', { chatId });
  host.emit(chatId, { type: 'item', item: approvalItem(`item-${requestId}`, requestId) });
  await until(() => alice.chatEvents().length === 1 && phone.chatEvents().length === 1, 'the approval on both');
  return { host, alice, phone };
}

const requestRow = (hostId: string, requestId: string) =>
  env.DB.prepare('SELECT state, settled_by FROM requests WHERE host_id = ? AND request_id = ?').bind(hostId, requestId).first();

describe('the losing answer of two', () => {
  it('is not told request-not-found when the winner never reached the host: it goes next, and hears host-offline like the winner', async () => {
    const { host, alice, phone } = await pendingApproval('lose1', 'req-l1');
    host.handlers['chat.approve'] = () => new Promise(() => undefined); // the host takes the winner and goes away before answering
    const winner = alice.request('chat.approve', { chatId: 'lose1', requestId: 'req-l1', decision: 'allow' });
    await until(() => host.requestsOf('chat.approve').length === 1, 'the winner at the host');
    const loser = phone.request('chat.approve', { chatId: 'lose1', requestId: 'req-l1', decision: 'deny' });
    // The loser's answer is at the relay and waits on the winner (nothing of it reaches the host yet).
    host.disconnect();
    const [won, lost] = await Promise.all([winner, loser]);
    expect(won.error.code).toBe('host-offline');
    expect(lost.ok).toBe(false);
    expect(lost.error.code).not.toBe('request-not-found');
    expect(lost.error.code).toBe('host-offline');
    expect(typeof lost.error.message).toBe('string');
    // And it is true: the request still waits, and the next answer once the host is back is carried out.
    expect(await requestRow(host.hostId, 'req-l1')).toEqual({ state: 'pending', settled_by: null });
    host.handlers['chat.approve'] = (p) => {
      host.emit('lose1', { type: 'item', item: { ...approvalItem('item-req-l1', 'req-l1'), decision: p.decision } });
      return {};
    };
    await host.connect();
    const later = await phone.request('chat.approve', { chatId: 'lose1', requestId: 'req-l1', decision: 'deny' });
    expect(later.ok).toBe(true);
    expect(host.requestsOf('chat.approve').map((f) => f.payload.decision)).toEqual(['allow', 'deny']);
  });

  it('hears request-not-found once the winner was carried out, and only the winner reaches the host', async () => {
    const { host, alice, phone } = await pendingApproval('lose2', 'req-l2');
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    host.handlers['chat.approve'] = async (p) => {
      await held;
      host.emit('lose2', { type: 'item', item: { ...approvalItem('item-req-l2', 'req-l2'), decision: p.decision } });
      return {};
    };
    const winner = alice.request('chat.approve', { chatId: 'lose2', requestId: 'req-l2', decision: 'allow' });
    await until(() => host.requestsOf('chat.approve').length === 1, 'the winner at the host');
    const loser = phone.request('chat.approve', { chatId: 'lose2', requestId: 'req-l2', decision: 'deny' });
    release();
    const [won, lost] = await Promise.all([winner, loser]);
    expect(won.ok).toBe(true);
    expect(lost.error.code).toBe('request-not-found');
    expect(host.requestsOf('chat.approve')).toHaveLength(1);
    expect(await requestRow(host.hostId, 'req-l2')).toEqual({ state: 'settled', settled_by: 'owner-1' });
  });

  it('two answers at once while the host is offline: neither is told the request was settled, and it still waits', async () => {
    const { host, alice, phone } = await pendingApproval('lose3', 'req-l3');
    const link = env.HOST_LINK.get(env.HOST_LINK.idFromName(host.hostId));
    host.disconnect();
    await until(async () => !(await link.isOnline()), 'the host offline');
    const answers = await Promise.all([
      alice.request('chat.approve', { chatId: 'lose3', requestId: 'req-l3', decision: 'allow' }),
      phone.request('chat.approve', { chatId: 'lose3', requestId: 'req-l3', decision: 'deny' }),
    ]);
    expect(answers.map((a) => a.error?.code)).toEqual(['host-offline', 'host-offline']);
    expect(await requestRow(host.hostId, 'req-l3')).toEqual({ state: 'pending', settled_by: null });
  });
});
