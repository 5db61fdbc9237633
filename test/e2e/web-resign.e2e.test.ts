// A team's grant after its team changed, end to end: the real relay (the shared wrangler dev), a real
// `tether host` that requires signatures and pinned the owner's browser at pairing, the app in the
// shared Chromium, and the team's members on the SDK with their own device keys.
//
// What the host does with a stale team grant, verified rather than assumed: it follows the members
// the owner's device signed. Someone who joined is refused there though the relay forwards their
// send (the host knows no key of theirs); someone who left is still carried out while the relay
// forwards for them (here the relay is made to, by an unsigned grant of its own, as a compromised
// relay could). The Host page says "Team changed: 1 joined, 1 left — sign again"; the owner presses
// Sign again, the browser's key signs the grant with the team as it is now, the host takes it in
// place of the old one: the one who joined is carried out, the one who left is refused. A member who
// is no owner sees the same state with no button.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryTokenStore, RelayApi, RelaySocket, relayPaths } from '../../src/client/index.ts';
import { deviceKeyOf, newDeviceKeyPair, signRequest, type DeviceKey } from '../../src/client/device-key.ts';
import { GrantSchema, type Grant } from '../../src/contracts/index.ts';
import { readAudit } from '../../src/host/trust/audit.ts';
import { accessibilityViolations, screenshot, signedInPerson, startSigningHost, until, type SignedInPerson } from './browser.ts';
import { HostProcess, personId, relayUrl, userToken } from './peers.ts';

const OWNER = 'resign-owner';
const STAYS = 'resign-stays';
const LEAVES = 'resign-leaves';
const JOINS = 'resign-joins';
const host = new HostProcess(`e2e-resign-${crypto.randomUUID().slice(0, 6)}`, OWNER);
const closers: Array<() => void> = [];
let owner: SignedInPerson;

interface Member {
  label: string;
  id: string;
  api: RelayApi;
  key: DeviceKey;
}

/** A person on the SDK with a first device registered at the relay. */
async function member(label: string): Promise<Member> {
  const api = new RelayApi(relayUrl(), {
    tokens: new MemoryTokenStore({ sessionId: 'e2e', refreshToken: 'unused', accessToken: await userToken(label), expiresAt: Date.now() + 600_000 }),
  });
  const key = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
  await api.registerDevice({ name: `${label} sdk`, publicKey: key.publicKey });
  return { label, id: await personId(label), api, key };
}

const ownerApi = async () =>
  new RelayApi(relayUrl(), {
    tokens: new MemoryTokenStore({ sessionId: 'e2e', refreshToken: 'unused', accessToken: await userToken(OWNER), expiresAt: Date.now() + 600_000 }),
  });

const detail = () => `${host.output.slice(-2000)}\naudit: ${JSON.stringify(readAudit(host.dataDir).entries.map((e) => [e.type, e.outcome, e.code, e.userId]))}`;

let sent = 0;
/** A chat.send signed by the member's own device, on their own chat socket: the reply frame. */
async function signedSend(who: Member, chatId: string): Promise<{ ok: boolean; error?: { code: string } }> {
  const socket = new RelaySocket(relayPaths.chat(relayUrl(), host.hostId, chatId), await userToken(who.label));
  closers.push(() => socket.close());
  await socket.opened;
  const frame = { id: `resign-send-${++sent}`, type: 'chat.send', payload: { chatId, text: `hello from ${who.label}` } };
  const signature = await signRequest(who.key, frame, { hostId: host.hostId });
  const reply = new Promise<any>((resolve) =>
    socket.onFrame((f: any) => {
      if (f.id === frame.id && 'ok' in f) resolve(f);
    }),
  );
  socket.send({ ...frame, signature } as never);
  return reply;
}

/** What the host's own audit says of the last send: carried out or refused, and for whom. */
const lastSend = () =>
  readAudit(host.dataDir)
    .entries.filter((e) => e.type === 'chat.send')
    .at(-1)!;

async function audited(match: (e: ReturnType<typeof readAudit>['entries'][number]) => boolean, what: string): Promise<void> {
  await until(() => readAudit(host.dataDir).entries.some(match), what, { detail });
}

async function teamGrant(): Promise<Grant> {
  const grants = (await (await ownerApi()).grants(host.hostId)).map((g) => GrantSchema.parse(g));
  return grants.find((g) => g.subject.type === 'team')!;
}

async function hostPage(page: Page): Promise<void> {
  await page.goto(`/hosts/${encodeURIComponent(host.hostId)}`);
  await page.locator('#host-title', { hasText: host.name }).waitFor();
}

beforeAll(async () => {
  owner = await signedInPerson('desktop', OWNER, { path: '/hosts' });
  await owner.page.getByRole('heading', { name: 'Hosts' }).waitFor();
  await startSigningHost(host, owner.page);
});

afterAll(async () => {
  for (const close of closers.splice(0).reverse()) close();
  await owner?.close();
  await host.stop();
});

describe('a team grant whose team changed is signed again from the Host page', () => {
  it('the host follows the members the owner signed until the owner presses Sign again; then the one who joined is served and the one who left is refused', async () => {
    const { page } = owner;
    const [stays, leaves, joins] = [await member(STAYS), await member(LEAVES), await member(JOINS)];

    // A chat, made in the app (signed by the browser the host pinned).
    await page.goto(`/chats/new?host=${encodeURIComponent(host.hostId)}`);
    await page.getByRole('button', { name: 'Create chat' }).click();
    await page.waitForURL(/\/hosts\/[^/]+\/chats\/[^/?]+$/);
    const chatId = decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1)!);

    // The team, with two members, given operator in the app: the browser signs it with the members now.
    const api = await ownerApi();
    const team = await api.createTeam('resign crew');
    for (const m of [stays, leaves]) await m.api.acceptInvitation((await api.invite(team.id, { role: 'member' })).token);
    await hostPage(page);
    const give = page.getByRole('form', { name: 'Give a role' });
    await give.getByRole('combobox', { name: /^To/ }).selectOption('team');
    await give.getByRole('combobox', { name: /^Team/ }).selectOption(team.id);
    await give.getByRole('combobox', { name: /^Role/ }).selectOption('operator');
    await give.getByRole('button', { name: 'Give' }).click();
    await page.locator('.notice.ok', { hasText: 'Given.' }).waitFor();
    const first = await teamGrant();
    expect(first).toMatchObject({ signed: true, resign: null, role: 'operator' });
    await audited((e) => e.type === 'trust.grant' && e.id === first.id && e.outcome === 'done', 'the team grant accepted');
    expect(await page.getByTestId('team-changed').count()).toBe(0);
    expect(await signedSend(stays, chatId)).toMatchObject({ ok: true });
    expect(lastSend()).toMatchObject({ outcome: 'done', userId: stays.id });

    // One joins, one is removed. The relay follows its team at once; the host follows the signature.
    await joins.api.acceptInvitation((await api.invite(team.id, { role: 'member' })).token);
    await api.call('DELETE', `/api/teams/${encodeURIComponent(team.id)}/members/${encodeURIComponent(leaves.id)}`);
    // The one who joined: the relay forwards his signed send, the host knows no key of his.
    expect(await signedSend(joins, chatId)).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });
    expect(lastSend()).toMatchObject({ outcome: 'refused', code: 'signature-invalid', userId: null });
    // The one who left: the relay no longer forwards for her, unless it is made to (an unsigned grant
    // of the relay's own, as a compromised relay could): then the old signature still carries her.
    await api.grant(host.hostId, { subject: { type: 'user', id: leaves.id }, role: 'operator' });
    expect(await signedSend(leaves, chatId)).toMatchObject({ ok: true });
    expect(lastSend()).toMatchObject({ outcome: 'done', userId: leaves.id });

    // The owner's list of hosts marks the host, and its link leads to the page that signs again.
    await page.goto('/hosts');
    const row = page.locator('a.host-row', { hasText: host.name });
    await row.locator('.badge', { hasText: 'Team changed: sign again' }).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);

    // The owner's Host page says so and offers to sign again.
    await hostPage(page);
    const prompt = page.getByTestId('team-changed');
    await prompt.waitFor();
    expect(await prompt.textContent()).toContain('Team changed: 1 joined, 1 left — sign again');
    expect(await prompt.textContent()).toContain(`Joined, not yet served by the machine: ${JOINS}`);
    expect(await prompt.textContent()).toContain(`Left, still served by the machine: ${LEAVES}`);

    // A member who is no owner of the host sees the state, with no button.
    const seen = await signedInPerson('phone', STAYS);
    try {
      // Their list has no mark: they cannot sign it.
      await seen.page.goto('/hosts');
      const theirRow = seen.page.locator('a.host-row', { hasText: host.name });
      await theirRow.waitFor();
      expect(await theirRow.locator('.badge').count()).toBe(0);
      await hostPage(seen.page);
      const theirs = seen.page.getByTestId('team-changed');
      await theirs.waitFor();
      expect(await theirs.textContent()).toContain('Team changed: 1 joined, 1 left — sign again');
      expect(await seen.page.getByRole('button', { name: /Sign again/ }).count()).toBe(0);
      expect(await accessibilityViolations(seen.page)).toEqual([]);
      await screenshot(seen.page, 'resign-member-waiting-phone');
      expect(seen.errors).toEqual([]);
    } finally {
      await seen.close();
    }

    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'resign-prompt-desktop');
    await page.getByRole('button', { name: 'Sign again for resign crew' }).click();
    await page.locator('.notice.ok', { hasText: 'Signed again' }).waitFor();
    expect(await page.getByTestId('team-changed').count()).toBe(0);
    await page.goto('/hosts');
    await row.waitFor();
    expect(await row.locator('.badge').count()).toBe(0);
    const again = await teamGrant();
    expect(again).toMatchObject({ signed: true, resign: null, role: 'operator' });
    expect(again.id).not.toBe(first.id);
    await audited((e) => e.type === 'trust.grant' && e.id === again.id && e.outcome === 'done', 'the grant signed again accepted');

    // The host took it in place of the old one: the one who joined is served, the one who left is refused
    // though the relay still forwards for her, the one who stayed goes on.
    expect(await signedSend(joins, chatId)).toMatchObject({ ok: true });
    expect(lastSend()).toMatchObject({ outcome: 'done', userId: joins.id, device: joins.key.id });
    expect(await signedSend(leaves, chatId)).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });
    expect(lastSend()).toMatchObject({ outcome: 'refused', code: 'signature-invalid', userId: null });
    expect(await signedSend(stays, chatId)).toMatchObject({ ok: true });
    expect(lastSend()).toMatchObject({ outcome: 'done', userId: stays.id });
    expect(readAudit(host.dataDir).broken).toBeNull();
    expect(owner.errors).toEqual([]);
  }, 120_000);
});
