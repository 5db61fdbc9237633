// The Team page's note that a team's grant must be signed again, end to end: the real relay (the
// shared wrangler dev), a real `tether host`, the app in the shared Chromium. The host's owner, a
// member of the team, signed the team's grant with their SDK device; someone joins, and the owner's
// Team page says "Team changed: sign again" with a link to the host's page, where Sign again (the
// browser's key) clears it, on that page and on the team's. A member who owns nothing sees no note.
// An owner of the host outside the team signs its grant again from the Host page too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryTokenStore, RelayApi, shareSigned } from '../../src/client/index.ts';
import { deviceKeyOf, newDeviceKeyPair } from '../../src/client/device-key.ts';
import { accessibilityViolations, pairedHost, screenshot, signedInPerson, type SignedInPerson } from './browser.ts';
import { type HostProcess, relayUrl, userToken } from './peers.ts';

const OWNER = 'teampage-owner';
const MEMBER = 'teampage-member';
const JOINS = 'teampage-joins';
let host: HostProcess;
let owner: SignedInPerson;

const sdkOf = async (label: string) =>
  new RelayApi(relayUrl(), {
    tokens: new MemoryTokenStore({ sessionId: 'e2e', refreshToken: 'unused', accessToken: await userToken(label), expiresAt: Date.now() + 600_000 }),
  });

beforeAll(async () => {
  host = await pairedHost(OWNER);
  owner = await signedInPerson('desktop', OWNER, { path: '/teams' });
});

afterAll(async () => {
  await owner?.close();
  await host?.stop();
});

describe('the Team page of a team whose signed grant is stale', () => {
  it("tells the owner of the host to sign again and links to the host's page; signed again there, the note is gone; a member who owns nothing sees none", async () => {
    const { page } = owner;
    const api = await sdkOf(OWNER);
    const key = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
    await api.registerDevice({ name: 'teampage sdk', publicKey: key.publicKey });
    const team = await api.createTeam(`page crew ${crypto.randomUUID().slice(0, 4)}`);
    await (await sdkOf(MEMBER)).acceptInvitation((await api.invite(team.id, { role: 'member' })).token);
    expect(await shareSigned(api, key, host.hostId, { subject: { type: 'team', id: team.id }, role: 'viewer' })).toMatchObject({ signed: true, resign: null });

    // In sync: no note.
    const teamPage = async () => {
      await page.goto(`/teams/${encodeURIComponent(team.id)}`);
      await page.getByRole('heading', { name: team.name }).waitFor();
      await page.getByRole('list', { name: 'Members' }).waitFor();
    };
    await teamPage();
    await page.getByText(MEMBER).first().waitFor();
    expect(await page.getByTestId('team-resign').count()).toBe(0);

    // Someone joins: the owner's Team page names the host to sign again on.
    await (await sdkOf(JOINS)).acceptInvitation((await api.invite(team.id, { role: 'member' })).token);
    await teamPage();
    const note = page.getByTestId('team-resign');
    await note.waitFor();
    expect(await note.textContent()).toContain('Team changed: sign again');
    const link = note.getByRole('link', { name: host.name });
    expect(await link.getAttribute('href')).toBe(`/hosts/${encodeURIComponent(host.hostId)}`);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'team-resign-note-desktop');

    // A member who owns nothing: the same page, no note.
    const member = await signedInPerson('phone', MEMBER);
    try {
      await member.page.goto(`/teams/${encodeURIComponent(team.id)}`);
      await member.page.getByRole('heading', { name: team.name }).waitFor();
      await member.page.getByText(JOINS).first().waitFor();
      expect(await member.page.getByTestId('team-resign').count()).toBe(0);
      expect(member.errors).toEqual([]);
    } finally {
      await member.close();
    }

    // The link leads to the host's page, which signs again; the Team page's note is then gone.
    await link.click();
    await page.waitForURL(`**/hosts/${encodeURIComponent(host.hostId)}`);
    await page.getByTestId('team-changed').waitFor();
    await page.getByRole('button', { name: `Sign again for ${team.name}` }).click();
    await page.locator('.notice.ok', { hasText: 'Signed again' }).waitFor();
    await teamPage();
    await page.getByText(JOINS).first().waitFor();
    expect(await page.getByTestId('team-resign').count()).toBe(0);
    expect((await api.grants(host.hostId)).find((g) => g.subject.id === team.id)).toMatchObject({ signed: true, resign: null });
    expect(owner.errors).toEqual([]);
  }, 120_000);

  it('an owner of the host who is not in the team signs its grant again from the Host page', async () => {
    const { page } = owner;
    const api = await sdkOf(OWNER);
    const key = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
    await api.registerDevice({ name: 'teampage sdk 2', publicKey: key.publicKey });
    // The member's team; the host's owner is not in it and cannot open its page.
    const memberApi = await sdkOf(MEMBER);
    const team = await memberApi.createTeam(`their crew ${crypto.randomUUID().slice(0, 4)}`);
    await expect(api.team(team.id)).rejects.toMatchObject({ code: 'team-not-found' });
    expect(await shareSigned(api, key, host.hostId, { subject: { type: 'team', id: team.id }, role: 'viewer' })).toMatchObject({ signed: true, resign: null });
    await (await sdkOf(JOINS)).acceptInvitation((await memberApi.invite(team.id, { role: 'member' })).token);

    await page.goto(`/hosts/${encodeURIComponent(host.hostId)}`);
    const prompt = page.getByTestId('team-changed');
    await prompt.waitFor();
    expect(await prompt.textContent()).toContain('Team changed: 1 joined, 0 left — sign again');
    await page.getByRole('button', { name: `Sign again for ${team.name}` }).click();
    await page.locator('.notice.ok', { hasText: 'Signed again' }).waitFor();
    expect(await page.getByTestId('team-changed').count()).toBe(0);
    expect((await api.grants(host.hostId)).find((g) => g.subject.id === team.id)).toMatchObject({ signed: true, resign: null });
    expect(owner.errors).toEqual([]);
  }, 120_000);
});
