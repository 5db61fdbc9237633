// `attachment.read` on the link: the relay may read back a chat's stored uploads by their content-hash
// file name, and nothing else on the machine (another chat's folder, a path, a visual's page).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINK_ATTACHMENT_READ, attachmentFileName } from '../../src/contracts/index.ts';
import type { HostCore } from '../../src/host/chats/core.ts';
import { serveRelayFrame } from '../../src/host/link/relay-requests.ts';
import { TINY_PNG, TestClient, idle, openCore, tempDir } from './harness.ts';

// One host for the file: each test makes its own chats.
const data = tempDir();
let core: HostCore;
let client: TestClient;

beforeAll(async () => {
  core = await openCore(data.dir);
  client = new TestClient(core);
});

afterAll(async () => {
  await core.close();
  data.cleanup();
});

const read = (chatId: string, file: unknown, id = `read-${Math.random()}`) =>
  serveRelayFrame(core, { id, type: LINK_ATTACHMENT_READ, payload: { chatId, file } }, 'relay');

describe('attachment.read', () => {
  it('answers the bytes of a stored upload of that chat, by its content-hash name only', async () => {
    await client.ok('chat.create', { chatId: 'c1' });
    await client.ok('chat.create', { chatId: 'c2' });
    await client.ok('chat.send', { chatId: 'c1', text: 'see', attachments: [{ name: 'dot.PNG', mime: 'image/png', data: TINY_PNG }] });
    await idle(core, 'c1');
    const user = core.session('c1').thread.items.find((item) => item.kind === 'user');
    const stored = user?.kind === 'user' ? user.attachments![0]! : null;
    const file = attachmentFileName(stored!.path);
    expect(file).toMatch(/^[0-9a-f]{40}\.png$/);

    const reply = await read('c1', file);
    expect(reply).toMatchObject({ ok: true });
    expect(reply.ok && (reply.result as { data: string }).data).toBe(TINY_PNG);

    // The same name in another chat's folder is not there; a visual's page or a path is not a name.
    expect(await read('c2', file)).toMatchObject({ ok: false, error: { code: 'item-not-found' } });
    writeFileSync(path.join(core.store.attachmentDir('c1'), 'vis-1.html'), '<p>page</p>');
    for (const bad of ['vis-1.html', `../c2/${file}`, '/etc/passwd', `${file}/..`, file!.toUpperCase(), 42]) {
      expect(await read('c1', bad)).toMatchObject({ ok: false, error: { code: 'bad-request' } });
    }
    expect(await read('nope', file)).toMatchObject({ ok: false, error: { code: 'chat-not-found' } });
  });

  it('passes every other frame to the runtime', async () => {
    const listed = await serveRelayFrame(core, { id: 'l1', type: 'chat.list', payload: {} }, 'relay');
    expect(listed).toMatchObject({ id: 'l1', ok: true });
    expect(listed.ok && (listed.result as { chats: { chatId: string }[] }).chats.map((c) => c.chatId).sort()).toEqual([...core.sessions.keys()].sort());
    expect(await serveRelayFrame(core, { id: 'x1', type: 'no.such', payload: {} }, 'relay')).toMatchObject({ ok: false, error: { code: 'unknown-request' } });
    expect(await serveRelayFrame(core, 'garbage', 'relay')).toMatchObject({ ok: false, error: { code: 'bad-request' } });
  });
});
