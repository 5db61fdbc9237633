// The attachment route: a ticket minted with the person's token (header only) opens one attachment of
// one chat; the bytes come from the host over the link (`attachment.read`, by content-hash file name);
// images are served as themselves, everything else as an opaque download that no browser renders.
import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { CHAT_ATTACHMENT_MAX_BYTES, LINK_ATTACHMENT_READ, type ChatAttachment, type ChatItem } from '../../src/contracts/index.ts';
import { FakeHost, OWNER, patientLink, userToken } from './peers.ts';
import { api, grant, signIn, type Person } from './people.ts';

let hosts = 0;
const newHost = () => new FakeHost(`host-att-${++hosts}`).connect();

const PNG = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));
const HTML = '<!doctype html><script>alert(document.cookie)</script>';
const hash = (n: number) => n.toString(16).padStart(40, '0');

/** What the fake host keeps on disk, by file name. */
const FILES: Record<string, Uint8Array> = {
  [`${hash(1)}.png`]: PNG,
  [`${hash(2)}.html`]: new TextEncoder().encode(HTML),
  [`${hash(3)}.svg`]: new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
  // As large as an upload may be: its base64 nearly fills a link frame.
  [`${hash(5)}.bin`]: Uint8Array.from({ length: CHAT_ATTACHMENT_MAX_BYTES }, (_, i) => (i * 31) & 0xff),
};

const attachment = (id: string, name: string, mime: string, file: string): ChatAttachment => ({
  id,
  name,
  mime,
  size: 1,
  path: `/home/me/.tether/attachments/chat/${file}`,
});

const ATTACHED: ChatAttachment[] = [
  attachment('att-png', 'dot.png', 'image/png', `${hash(1)}.png`),
  attachment('att-html', 'page "one" é.html', 'text/html', `${hash(2)}.html`),
  attachment('att-svg', 'logo.svg', 'image/svg+xml', `${hash(3)}.svg`),
  attachment('att-gone', 'gone.png', 'image/png', `${hash(4)}.png`),
  attachment('att-big', 'big.bin', 'application/octet-stream', `${hash(5)}.bin`),
  // Not a name the host's store writes: never asked of the host.
  attachment('att-odd', 'passwd', 'text/plain', '/etc/passwd'),
];

function message(attachments: ChatAttachment[]): ChatItem {
  return { kind: 'user', id: 'u1', createdAt: Date.now(), turnId: null, text: 'files', attachments };
}

/** A host with chat `a1` holding ATTACHED and chat `a2` holding none, answering attachment.read from FILES. */
async function hostWithFiles(): Promise<FakeHost> {
  const host = await newHost();
  host.create('a1', [message(ATTACHED)]);
  host.create('a2', [message([])]);
  host.handlers[LINK_ATTACHMENT_READ] = (p: { chatId: string; file: string }) => {
    const bytes = p.chatId === 'a1' ? FILES[p.file] : undefined;
    if (!bytes) throw Object.assign(new Error('This attachment is no longer on the host'), { code: 'item-not-found' });
    return { data: base64(bytes) };
  };
  return host;
}

const ticketAt = (path: string, who: Person | string = OWNER) =>
  (async () =>
    SELF.fetch(`http://relay.test/v1/attachments/${path}/ticket`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${typeof who === 'string' ? await userToken(who) : who.token}` },
    }))();

/** The URL a ticket opens, or the refusal. */
async function ticketUrl(hostId: string, chatId: string, attachmentId: string, who: Person | string = OWNER): Promise<string> {
  const res = await ticketAt(`${hostId}/${chatId}/${attachmentId}`, who);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { url: string; expiresAt: number };
  expect(body.expiresAt).toBeGreaterThan(Date.now());
  return body.url;
}

const open = (url: string) => SELF.fetch(url);

function base64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

describe('the attachment route', () => {
  it('serves an image of the chat inline behind a ticket, with the bytes the host stored', async () => {
    const host = await hostWithFiles();
    const url = await ticketUrl(host.hostId, 'a1', 'att-png');
    expect(new URL(url).pathname).toBe(`/v1/attachments/${host.hostId}/a1/att-png`);
    expect(url).not.toContain(await userToken());
    const res = await open(url);
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(PNG);
    expect(res.headers.get('Content-Type')).toBe('image/png');
    expect(res.headers.get('Content-Disposition')).toBe('inline; filename="dot.png"; filename*=UTF-8\'\'dot.png');
    expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff');
    expect(res.headers.get('Content-Security-Policy')).toMatch(/^sandbox;/);
    expect(res.headers.get('Cache-Control')).toMatch(/^private\b/);
    // The host was asked for that file of that chat by its content-hash name, nothing more.
    expect(host.requestsOf(LINK_ATTACHMENT_READ).map((f) => f.payload)).toEqual([{ chatId: 'a1', file: `${hash(1)}.png` }]);
  });

  it('serves HTML and SVG as downloads of opaque bytes, never as a page', async () => {
    const host = await hostWithFiles();
    const html = await open(await ticketUrl(host.hostId, 'a1', 'att-html'));
    expect(html.status).toBe(200);
    expect(new TextDecoder().decode(await html.arrayBuffer())).toBe(HTML);
    expect(html.headers.get('Content-Type')).toBe('application/octet-stream');
    expect(html.headers.get('Content-Disposition')).toBe('attachment; filename="page _one_ _.html"; filename*=UTF-8\'\'page%20%22one%22%20%C3%A9.html');
    expect(html.headers.get('X-Content-Type-Options')).toBe('nosniff');
    expect(html.headers.get('Content-Security-Policy')).toMatch(/^sandbox;/);
    expect(html.headers.get('Content-Security-Policy')).not.toContain('allow-');
    expect(html.headers.get('Cache-Control')).toMatch(/^private\b/);

    const svg = await open(await ticketUrl(host.hostId, 'a1', 'att-svg'));
    expect(svg.headers.get('Content-Type')).toBe('application/octet-stream');
    expect(svg.headers.get('Content-Disposition')).toMatch(/^attachment; /);
    await svg.arrayBuffer();
  });

  it('carries an attachment as large as an upload may be (10 MiB) whole', async () => {
    const host = await hostWithFiles();
    await patientLink(host.hostId);
    const res = await open(await ticketUrl(host.hostId, 'a1', 'att-big'));
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Length')).toBe(String(CHAT_ATTACHMENT_MAX_BYTES));
    const digest = async (bytes: ArrayBuffer | Uint8Array) => new Uint8Array(await crypto.subtle.digest('SHA-256', new Uint8Array(bytes))).join(',');
    const body = await res.arrayBuffer();
    expect(body.byteLength).toBe(CHAT_ATTACHMENT_MAX_BYTES);
    expect(await digest(body)).toBe(await digest(FILES[`${hash(5)}.bin`]!));
  });

  it('opens only the attachment and chat its ticket names, and never with a token in the address', async () => {
    const host = await hostWithFiles();
    const url = new URL(await ticketUrl(host.hostId, 'a1', 'att-png'));
    const ticket = url.searchParams.get('ticket')!;
    const at = (path: string, query: string) => SELF.fetch(`http://relay.test/v1/attachments/${path}?${query}`);
    // Another attachment, another chat, no ticket, a person's token instead of a ticket, a visual's ticket.
    for (const [path, query] of [
      [`${host.hostId}/a1/att-html`, `ticket=${ticket}`],
      [`${host.hostId}/a2/att-png`, `ticket=${ticket}`],
      [`${host.hostId}/a1/att-png`, ''],
      [`${host.hostId}/a1/att-png`, `ticket=${await userToken()}`],
    ] as const) {
      const res = await at(path, query);
      expect(res.status, `${path}?${query.slice(0, 12)}`).toBe(401);
      expect(((await res.json()) as { code: string }).code).toBe('unauthorized');
    }
    const visual = await SELF.fetch(`http://relay.test/v1/visuals/${host.hostId}/a1/att-png/ticket`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${await userToken()}` },
    });
    const visualTicket = new URL(((await visual.json()) as { url: string }).url).searchParams.get('ticket')!;
    expect((await at(`${host.hostId}/a1/att-png`, `ticket=${visualTicket}`)).status).toBe(401);
    // A ticket opens no socket either.
    expect((await SELF.fetch(`http://relay.test/v1/hosts/${host.hostId}/lobby?ticket=${ticket}`, { headers: { Upgrade: 'websocket' } })).status).toBe(401);
    expect(host.requestsOf(LINK_ATTACHMENT_READ)).toHaveLength(0);
  });

  it('answers a person only for the chats their role reaches, checked again when the ticket is used', async () => {
    const host = await hostWithFiles();
    const owner = await signIn(OWNER);
    const ivy = await signIn(`att-ivy-${hosts}`);
    const mallory = await signIn(`att-mallory-${hosts}`);
    const given = await grant(owner, host.hostId, { type: 'user', id: ivy.userId }, 'viewer', 'a1');

    // Ivy may read a1 (a viewer is enough); not a2; someone with no role, nothing.
    const url = await ticketUrl(host.hostId, 'a1', 'att-png', ivy);
    expect((await open(url)).status).toBe(200);
    const other = await ticketAt(`${host.hostId}/a2/att-png`, ivy);
    expect(other.status).toBe(403);
    expect(((await other.json()) as { code: string }).code).toBe('forbidden');
    expect((await ticketAt(`${host.hostId}/a1/att-png`, mallory)).status).toBe(403);
    expect((await SELF.fetch(`http://relay.test/v1/attachments/${host.hostId}/a1/att-png/ticket`, { method: 'POST' })).status).toBe(401);

    // A ticket in hand stops working once the role is taken away.
    const kept = await ticketUrl(host.hostId, 'a1', 'att-png', ivy);
    expect((await api(owner, 'DELETE', `/api/hosts/${host.hostId}/grants/${given.id}`)).status).toBeLessThan(300);
    const refused = await open(kept);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { code: string }).code).toBe('forbidden');
  });

  it('refuses ids that are not attachment ids, and attachments the chat does not hold or the host lost', async () => {
    const host = await hostWithFiles();
    for (const bad of ['..%2F..%2Fetc%2Fpasswd', '.hidden', 'a%00b', 'x'.repeat(200)]) {
      const res = await ticketAt(`${host.hostId}/a1/${bad}`);
      expect(res.status, bad).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe('bad-request');
      expect((await SELF.fetch(`http://relay.test/v1/attachments/${host.hostId}/a1/${bad}?ticket=x`)).status, bad).toBe(400);
    }
    // Not in this chat's thread (it is a1's), a path the store never writes, a file the host no longer has.
    const notHere = await open(await ticketUrl(host.hostId, 'a2', 'att-png'));
    expect(notHere.status).toBe(404);
    expect(((await notHere.json()) as { code: string }).code).toBe('item-not-found');
    expect((await open(await ticketUrl(host.hostId, 'a1', 'att-odd'))).status).toBe(404);
    expect(host.requestsOf(LINK_ATTACHMENT_READ)).toHaveLength(0);
    const gone = await open(await ticketUrl(host.hostId, 'a1', 'att-gone'));
    expect(gone.status).toBe(404);
    expect(host.requestsOf(LINK_ATTACHMENT_READ).map((f) => f.payload.file)).toEqual([`${hash(4)}.png`]);

    // The host away: said so, not a hang.
    const url = await ticketUrl(host.hostId, 'a1', 'att-png');
    host.disconnect();
    const away = await open(url);
    expect(away.status).toBe(503);
    expect(((await away.json()) as { code: string }).code).toBe('host-offline');
  });
});
