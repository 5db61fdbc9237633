import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { VISUAL_LIMITS } from '../../src/contracts/index.ts';
import { Client, FakeHost, userToken } from './peers.ts';

describe('large frames', () => {
  it('takes a visual page at the largest size VISUAL_LIMITS allows and serves it whole', async () => {
    const host = await new FakeHost('host-large-1').connect();
    host.create('big', []);
    const me = await Client.chat(host.hostId, 'big');
    await me.request('chat.attach', { chatId: 'big' });
    const html = `<p>${'é'.repeat((VISUAL_LIMITS.bytes - 16) / 2)}</p>`;
    host.sendEvent('visual.page', { chatId: 'big', visualId: 'huge', html });
    host.sendEvent('chat.visuals', { chatId: 'big', visuals: [{ id: 'huge', title: 'Huge', at: 1, maxHeight: 2000, size: VISUAL_LIMITS.bytes }] });
    await me.waitFor((f) => f.event === 'chat.visuals', 'visuals');
    const page = await SELF.fetch(`http://relay.test/v1/visuals/${host.hostId}/big/huge?access_token=${await userToken()}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toBe(html);
  });

  it('forwards a send with attachments at the 10 MiB limit to the host', async () => {
    const host = await new FakeHost('host-large-2').connect();
    host.create('att', []);
    host.handlers['chat.send'] = (p) => ({ queued: false, turnId: `t-${p.attachments.length}` });
    const me = await Client.chat(host.hostId, 'att');
    await me.request('chat.attach', { chatId: 'att' });
    const data = Buffer.alloc(10 * 1024 * 1024, 7).toString('base64');
    const reply = await me.request('chat.send', { chatId: 'att', text: 'see file', attachments: [{ name: 'blob.bin', mime: 'application/octet-stream', data }] });
    expect(reply.ok).toBe(true);
    expect(host.requestsOf('chat.send')[0]!.payload.attachments[0].data.length).toBe(data.length);
  });

  it('keeps a 10 MiB send made while the host is offline and delivers it whole', async () => {
    const host = await new FakeHost('host-large-3').connect();
    host.create('att2', []);
    host.handlers['chat.send'] = () => ({ queued: false });
    const me = await Client.chat(host.hostId, 'att2');
    await me.request('chat.attach', { chatId: 'att2' });
    host.disconnect();
    await me.waitFor((f) => f.event === 'host.presence', 'presence');
    const lobby = await Client.lobby(host.hostId);
    await lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online === false, 'offline');
    const data = Buffer.alloc(10 * 1024 * 1024, 9).toString('base64');
    const kept = await me.request('chat.send', { chatId: 'att2', text: 'later', attachments: [{ name: 'b.bin', mime: 'application/octet-stream', data }] });
    expect(kept.result).toEqual({ queued: true });
    await host.connect();
    const deadline = Date.now() + 10_000;
    while (host.requestsOf('chat.send').length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(host.requestsOf('chat.send')[0]!.payload.attachments[0].data).toBe(data);
  });
});

