// The web app's hosts, chats and teams against the real relay and a real host process (the script
// provider) in the shared Chromium: pairing a machine by approving its code at /pair?code=, live
// presence, rename, grants (a second person sees the host), a chat made from the host's catalog, the
// chat list across hosts with live status (needs-you first) and search, teams with an invitation link
// accepted by someone new, that team given a role on the host (its member sees the host, opens a chat
// and approves; taking the role away closes their access live), revoking the host, and the app's
// installability (manifest, service worker, the Install button answering the browser's prompt). One
// person at a desktop size, others on phones.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ChatChannel, HostConnection, MemoryOutboxStore, RelayApi, type SessionTokens } from '../../src/client/index.ts';
import { IDP_ACCESS_AUD } from '../support/idp-server.ts';
import { shortFingerprint } from '../../src/contracts/index.ts';
import { accessibilityViolations, newPersonPage, screenshot, signedInPerson, type PersonPage, type SignedInPerson } from './browser.ts';
import { HostProcess, personCredentials, relayUrl } from './peers.ts';
import { readPinnedOwner } from '../../src/host/trust/pinned.ts';

const OWNER = 'web-hosts-a';
const GUEST = 'web-hosts-b';
const NEWCOMER = { email: 'web-hosts-newcomer@e2e.test', name: 'Casey Newcomer', password: 'newcomer-password-0123' };

let owner: SignedInPerson;
let guest: SignedInPerson | null = null;

/** A session for `email` through Cloudflare Access (the loopback provider mints the assertion): a verified address. */
async function accessSession(email: string): Promise<SessionTokens> {
  const minted = await fetch(`${inject('idpUrl')}/test/mint`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ claims: { iss: inject('idpUrl'), aud: [IDP_ACCESS_AUD], sub: `access-${email}`, email, type: 'app' } }),
  });
  const { token } = (await minted.json()) as { token: string };
  const res = await fetch(`${relayUrl()}/api/auth/access`, { method: 'POST', headers: { 'Cf-Access-Jwt-Assertion': token } });
  if (!res.ok) throw new Error(`Access sign-in of ${email}: ${res.status} ${await res.text()}`);
  return (await res.json()) as SessionTokens;
}
/** Joins the team "Web crew" by its invitation link (teams), then holds the team's role on the host. */
let member: PersonPage | null = null;
const opened: PersonPage[] = [];
const host = new HostProcess(`web-box-${crypto.randomUUID().slice(0, 6)}`, OWNER);
let api: RelayApi;
const sockets: { close(): void }[] = [];
let lobby: HostConnection | null = null;
/** The owner's SDK lobby of the host (as another device of theirs would hold it). */
const ownerLobby = () =>
  (lobby ??= (() => {
    const made = new HostConnection(api, host.hostId);
    sockets.push(made);
    return made;
  })());

/** The folders chats may work in: the host's policy allows only these (its default is the home folder). */
const WORK = path.join(host.dataDir, 'work');

beforeAll(async () => {
  mkdirSync(WORK, { recursive: true });
  writeFileSync(path.join(host.dataDir, 'config.json'), JSON.stringify({ policy: { roots: [WORK] } }));
  owner = await signedInPerson('desktop', OWNER, { path: '/hosts' });
  opened.push(owner);
  api = new RelayApi(relayUrl());
  const { email, password } = personCredentials(OWNER);
  await api.signIn(email, password);
});

afterAll(async () => {
  for (const socket of sockets) socket.close();
  await Promise.all(opened.map((p) => p.close()));
  await host.stop();
});

const noViolations = async (page: PersonPage['page']) => expect(await accessibilityViolations(page)).toEqual([]);
const hostRow = (page: PersonPage['page'], name = host.name) => page.locator('a.host-row', { hasText: name });

describe('hosts in the web app', () => {
  it('pairs a machine by approving its code at /pair?code=, then shows its presence live', async () => {
    const { page } = owner;
    await page.getByRole('heading', { name: 'Hosts' }).waitFor();
    await noViolations(page);
    host.approveWith = async (userCode) => {
      // The address `tether host pair` shows, opened by the person.
      await page.goto(`/pair?code=${encodeURIComponent(userCode)}`);
      expect(await page.getByLabel('Code shown by the host').inputValue()).toBe(userCode);
      await noViolations(page);
      await screenshot(page, 'hosts-pair-desktop');
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.getByRole('heading', { name: 'Host paired' }).waitFor();
    };
    await host.start();
    expect(host.hostId).toMatch(/.+/);
    // The browser signed the approval with its own device key; the machine checked it, pinned that
    // person and device, and its terminal shows the device's short fingerprint, which Settings shows too.
    const fingerprint = /Approved by .+\n\s+from device (\S{4}-\S{4}-\S{4}-\S{4}):/.exec(host.pairOutput)?.[1];
    expect(fingerprint, host.pairOutput).toBeDefined();
    const pinned = readPinnedOwner(host.dataDir)!;
    expect(pinned.hostId).toBe(host.hostId);
    expect(shortFingerprint(pinned.owner.device.id)).toBe(fingerprint);
    expect((await api.devices()).map((d) => d.id)).toContain(pinned.owner.device.id);

    await page.getByRole('link', { name: 'Back to hosts' }).click();
    const row = hostRow(page);
    await expect.poll(() => row.getAttribute('data-online'), { timeout: 20_000 }).toBe('true');
    await screenshot(page, 'hosts-list-desktop');
    // The machine goes away and comes back: the list follows without a reload.
    await host.stop();
    await expect.poll(() => row.getAttribute('data-online'), { timeout: 20_000 }).toBe('false');
    await host.start();
    await expect.poll(() => row.getAttribute('data-online'), { timeout: 20_000 }).toBe('true');
  });

  it('renames the host', async () => {
    const { page } = owner;
    await hostRow(page).click();
    await page.getByRole('heading', { name: host.name }).waitFor();
    // The host page says what the machine allows, as its own policy reports it.
    const allows = page.getByTestId('host-policy');
    await allows.waitFor();
    expect(await allows.textContent()).toMatch(new RegExp(`Folders: ${WORK}.*Widest runtime mode: auto-accept-edits; a chat without a mode is supervised`));
    await noViolations(page);
    const renamed = `${host.name} renamed`;
    await page.getByLabel('Name', { exact: true }).fill(renamed);
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('heading', { name: renamed }).waitFor();
    await page.getByRole('link', { name: 'Back to hosts' }).click();
    await hostRow(page, renamed).waitFor();
    expect((await api.hosts()).find((h) => h.id === host.hostId)?.name).toBe(renamed);
  });

  it('gives a second person a role, and the host appears for them', async () => {
    const { page } = owner;
    await hostRow(page).click();
    // A grant by email reaches only an address someone proved: this guest signs in through Access
    // (an e2e person made by an invitation holds theirs unverified, and the form would be refused).
    const guestEmail = `${GUEST}-${crypto.randomUUID().slice(0, 8)}@e2e.test`;
    const session = await accessSession(guestEmail);
    guest = { ...(await newPersonPage('phone', { path: '/hosts', session })), label: GUEST, email: guestEmail };
    opened.push(guest);
    await guest.page.getByRole('heading', { name: 'Hosts' }).waitFor();
    expect(await hostRow(guest.page).count()).toBe(0);

    const give = page.getByRole('form', { name: 'Give a role' });
    await give.getByRole('textbox', { name: 'Email' }).fill(guestEmail);
    await give.getByRole('combobox', { name: 'Role' }).selectOption('operator');
    await give.getByRole('button', { name: 'Give' }).click();
    await page.getByRole('combobox', { name: `Role of ${guestEmail}` }).waitFor();
    expect(await page.getByRole('combobox', { name: `Role of ${guestEmail}` }).inputValue()).toBe('operator');
    await noViolations(page);
    await screenshot(page, 'hosts-grants-desktop');

    await guest.page.reload();
    await hostRow(guest.page).waitFor();
    expect(await hostRow(guest.page).textContent()).toContain('operator');
    await noViolations(guest.page);
    await screenshot(guest.page, 'hosts-list-guest-phone');
  });
});

describe('chats in the web app', () => {
  const alpha = path.join(WORK, 'alpha-project');
  const beta = path.join(WORK, 'beta-project');
  let alphaUrl = '';

  it("creates a chat from the host's catalog (agent, model, options, folder, runtime mode) and opens it", async () => {
    mkdirSync(alpha, { recursive: true });
    mkdirSync(beta, { recursive: true });
    const { page } = owner;
    await page.goto(`/chats/new?host=${encodeURIComponent(host.hostId)}`);
    const agent = page.getByLabel('Agent');
    await agent.waitFor();
    // The catalog is the host's: the script provider answers as Claude Code with its model.
    const catalog = await ownerLobby().request('provider.list', {});
    const claude = catalog.providers.find((p) => p.kind === 'claude')!;
    expect(await agent.inputValue()).toBe('claude');
    const models = await page.locator('select[name="model"] option').allTextContents();
    expect(models.length).toBe(claude.models.length);
    // The host's policy comes with its catalog: its folders, its default folder, and no mode above its ceiling.
    expect(catalog.policy).toEqual({ roots: [WORK], defaultFolder: WORK, modeCeiling: 'auto-accept-edits', defaultMode: 'supervised' });
    expect(await page.getByTestId('host-policy').textContent()).toContain(WORK);
    // The picker names the default folder (the host's, inside its roots) before anything is picked.
    expect(await page.getByTestId('folder-chosen').textContent()).toContain(`host's default folder, ${WORK}`);
    expect(await page.locator('select[name="runtime-mode"] option[disabled]').allTextContents()).toEqual([
      expect.stringContaining('Auto'),
      expect.stringContaining('Full access'),
    ]);
    // A folder outside them is refused by the host, and the refusal names the folders it allows.
    await page.getByLabel('Or type a folder').fill('/etc');
    await page.getByRole('button', { name: 'Open', exact: true }).click();
    await expect.poll(() => page.getByTestId('folder-error').textContent()).toContain(`allowed folders: ${WORK}`);
    await page.getByLabel('Or type a folder').fill(alpha);
    await page.getByRole('button', { name: 'Open', exact: true }).click();
    await expect.poll(() => page.getByTestId('folder-chosen').textContent()).toContain(alpha);
    await page.getByLabel('Runtime mode').selectOption('auto-accept-edits');
    await noViolations(page);
    await screenshot(page, 'chats-new-desktop');
    await page.getByRole('button', { name: 'Create chat' }).click();
    await page.waitForURL(new RegExp(`/hosts/${host.hostId}/chats/[0-9a-f-]{36}$`));
    alphaUrl = new URL(page.url()).pathname;
    const chatId = alphaUrl.split('/').pop()!;
    const info = (await api.chats()).find((c) => c.info.chatId === chatId)?.info;
    expect(info).toMatchObject({ provider: 'claude', cwd: alpha, runtimeMode: 'auto-accept-edits' });
    // On a desktop the list stays beside the open chat, with this chat marked as the open one.
    const listed = page.locator('.list-pane a.chat-row[aria-current="page"]');
    await listed.waitFor();
    expect(await listed.textContent()).toContain('Demo agent (scripted) in alpha-project');
    await screenshot(page, 'chats-open-desktop');
  });

  it('lists chats across hosts with live status, needs-you first, and searches by title', async () => {
    expect(guest).not.toBeNull();
    const { page } = guest!;
    // A second chat, made and driven through the SDK as the owner would from another device.
    const betaId = crypto.randomUUID();
    await ownerLobby().request('chat.create', { chatId: betaId, cwd: beta });
    await page.goto('/');
    await page.getByRole('heading', { name: 'Chats' }).waitFor();
    const rows = page.locator('a.chat-row');
    await expect.poll(() => rows.count()).toBe(2);

    const channel = new ChatChannel(api, host.hostId, betaId, { outbox: new MemoryOutboxStore() });
    sockets.push(channel);
    await channel.send({ text: 'please approve running the tests' }).settled;
    // The list hears the status from the host's lobby: the chat needs the person, and comes first.
    const first = rows.first();
    await expect.poll(() => first.getAttribute('data-status'), { timeout: 20_000 }).toBe('needs-you');
    // The host named the chat after its first message: the list shows that title (the other, never
    // sent to, is still called after its agent and folder).
    await expect.poll(() => first.locator('.chat-row-title').textContent()).toBe('please approve running the tests');
    expect(await first.textContent()).toContain('Needs you');
    await page.getByText('1 chat needs you').waitFor();
    await noViolations(page);
    await screenshot(page, 'chats-needs-you-phone');

    const search = page.getByRole('searchbox', { name: 'Search chats by title, folder or last message' });
    await search.fill('alpha');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('Demo agent (scripted) in alpha-project');
    // Words of the title, in any order and case.
    await search.fill('TESTS  approve');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().locator('.chat-row-title').textContent()).toBe('please approve running the tests');
    await search.fill('approve alpha');
    await page.getByText('No chat has that in its title, folder or last message.').waitFor();
    await search.fill('');
    await expect.poll(() => rows.count()).toBe(2);

    // On a phone a chat fills the screen, with the way back to the list; its header shows its title.
    await rows.first().click();
    await page.getByRole('link', { name: 'Back to chats' }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'please approve running the tests' }).waitFor();
    expect(await page.locator('.list-pane').isVisible()).toBe(false);
    await page.getByRole('link', { name: 'Back to chats' }).click();
    await page.getByRole('heading', { name: 'Chats' }).waitFor();
  });
});

describe('teams in the web app', () => {
  it('makes a team, invites someone new by link, who joins, and a role changes', async () => {
    const { page } = owner;
    await page.goto('/teams');
    await page.getByLabel('Team name').fill('Web crew');
    await page.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('heading', { name: 'Web crew' }).waitFor();
    const invite = page.getByRole('form', { name: 'Invite someone' });
    await invite.getByLabel('Role').selectOption('admin');
    await invite.getByLabel(/Their email/).fill(NEWCOMER.email);
    await invite.getByRole('button', { name: 'Make invitation link' }).click();
    const link = await page.getByTestId('invitation-link').textContent();
    expect(link).toMatch(/\/invitations\/[^/]+$/);
    await noViolations(page);
    await screenshot(page, 'teams-invite-desktop');

    // Someone without an account opens the link on their phone.
    const newcomer = (member = await newPersonPage('phone', { path: new URL(link!).pathname }));
    opened.push(newcomer);
    await newcomer.page.getByText('Join Web crew as admin').waitFor();
    await noViolations(newcomer.page);
    await newcomer.page.getByLabel('Your name').fill(NEWCOMER.name);
    await newcomer.page.getByLabel('Password').fill(NEWCOMER.password);
    await screenshot(newcomer.page, 'teams-invitation-phone');
    await newcomer.page.getByRole('button', { name: 'Create account and join' }).click();
    await newcomer.page.getByRole('heading', { name: 'Web crew' }).waitFor();
    expect(await newcomer.page.getByText('Your role: admin').count()).toBe(1);

    await page.reload();
    const role = page.getByRole('combobox', { name: `Role of ${NEWCOMER.name}` });
    await role.waitFor();
    expect(await role.inputValue()).toBe('admin');
    await role.selectOption('member');
    await page.getByText(`${NEWCOMER.name} is now member.`).waitFor();
    await newcomer.page.reload();
    await newcomer.page.getByText('Your role: member').waitFor();
  });
});

describe("a team's role on the host", () => {
  it("reaches the team's members: they see the host, open a chat and approve; taking it away closes their access live", async () => {
    expect(member).not.toBeNull();
    const { page: theirs } = member!;
    // A chat waiting for an approval, made and driven by the owner through the SDK.
    const chatId = crypto.randomUUID();
    await ownerLobby().request('chat.create', { chatId, cwd: WORK });
    const channel = new ChatChannel(api, host.hostId, chatId, { outbox: new MemoryOutboxStore() });
    sockets.push(channel);
    await channel.send({ text: 'please approve running the tests' }).settled;
    await theirs.goto('/hosts');
    await theirs.getByRole('heading', { name: 'Hosts' }).waitFor();
    expect(await hostRow(theirs).count()).toBe(0);

    const { page } = owner;
    await page.goto(`/hosts/${encodeURIComponent(host.hostId)}`);
    const give = page.getByRole('form', { name: 'Give a role' });
    await give.getByRole('combobox', { name: 'To' }).selectOption('team');
    await give.getByRole('combobox', { name: 'Team' }).selectOption({ label: 'Web crew' });
    await give.getByRole('combobox', { name: 'Role' }).selectOption('operator');
    await give.getByRole('button', { name: 'Give' }).click();
    const teamRole = page.getByRole('combobox', { name: 'Role of Web crew' });
    await teamRole.waitFor();
    expect(await teamRole.inputValue()).toBe('operator');
    expect(await page.getByRole('list', { name: 'Who may use it' }).getByText('team', { exact: true }).count()).toBe(1);
    await noViolations(page);

    // The member, through the team: the host is listed with the team's role, its chat opens, and their Allow runs the command.
    await theirs.reload();
    await hostRow(theirs).waitFor();
    expect(await hostRow(theirs).textContent()).toContain('operator');
    await theirs.goto(`/hosts/${encodeURIComponent(host.hostId)}/chats/${chatId}`);
    const allow = theirs.locator('.approval-card').getByRole('button', { name: 'Allow', exact: true });
    await allow.waitFor();
    await noViolations(theirs);
    await allow.click();
    await theirs.locator('.thread-row[data-kind="assistant"]', { hasText: 'All 42 tests passed.' }).waitFor();
    await expect.poll(() => channel.thread.items.some((i) => i.kind === 'approval' && i.decision === 'allow')).toBe(true);
    await screenshot(theirs, 'hosts-team-member-approved-phone');

    // Taken away: their open chat is closed by the relay at once, and the host leaves their list.
    await page.getByRole('button', { name: 'Remove Web crew' }).click();
    await page.getByText('Web crew no longer has access.').waitFor();
    await theirs.getByRole('alert').filter({ hasText: 'Your access to this host was revoked' }).waitFor();
    // On a phone the open chat fills the screen: back to the list, then to Hosts, without a reload.
    await theirs.getByRole('link', { name: 'Back to chats' }).click();
    await theirs.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Hosts' }).click();
    await theirs.getByRole('heading', { name: 'Hosts' }).waitFor();
    await expect.poll(() => hostRow(theirs).count()).toBe(0);
  });
});

describe('revoking', () => {
  it("revokes the host: gone from the owner's list, and from the guest's without a reload", async () => {
    const { page: guestPage } = guest!;
    await guestPage.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Hosts' }).click();
    await hostRow(guestPage).waitFor();
    const { page } = owner;
    await page.goto(`/hosts/${encodeURIComponent(host.hostId)}`);
    await page.getByRole('button', { name: 'Revoke this host' }).click();
    await page.getByRole('button', { name: 'Yes, revoke' }).click();
    await page.getByRole('heading', { name: 'Hosts' }).waitFor();
    await expect.poll(() => hostRow(page).count()).toBe(0);
    expect((await api.hosts()).some((h) => h.id === host.hostId)).toBe(false);
    // The relay closes the guest's lobby of that host for good; their list reads itself again.
    await expect.poll(() => hostRow(guestPage).count(), { timeout: 20_000 }).toBe(0);
  });
});

describe('installing the app', () => {
  it("is installable: a valid manifest, a service worker in control, and Install in Settings answers the browser's prompt", async () => {
    const { page } = owner;
    await page.goto('/settings');
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    await expect.poll(() => page.evaluate(() => navigator.serviceWorker.controller?.scriptURL ?? null), { timeout: 20_000 }).toMatch(/\/sw\.js$/);

    // The manifest the page links, as the browser reads it, with every icon it names.
    const manifest = await page.evaluate(async () => {
      const link = document.querySelector<HTMLLinkElement>('link[rel="manifest"]');
      if (!link) return null;
      const res = await fetch(link.href);
      const body = (await res.json()) as {
        name: string;
        short_name: string;
        start_url: string;
        scope: string;
        display: string;
        icons: { src: string; sizes: string; type: string }[];
      };
      const icons = await Promise.all(
        body.icons.map(async (icon) => {
          const got = await fetch(new URL(icon.src, res.url));
          const blob = await got.blob();
          const size = icon.type === 'image/png' ? await createImageBitmap(blob).then((b) => `${b.width}x${b.height}`) : 'any';
          return { sizes: icon.sizes, type: icon.type, status: got.status, served: got.headers.get('content-type'), size };
        }),
      );
      return { status: res.status, body, icons };
    });
    expect(manifest).not.toBeNull();
    expect(manifest!.status).toBe(200);
    expect(manifest!.body).toMatchObject({ name: 'Tether', short_name: 'Tether', start_url: '/', scope: '/', display: 'standalone' });
    for (const icon of manifest!.icons) {
      expect(icon.status).toBe(200);
      expect(icon.served).toContain(icon.type);
      expect(icon.size).toBe(icon.sizes);
    }
    expect(manifest!.icons.map((i) => i.sizes)).toEqual(expect.arrayContaining(['192x192', '512x512']));
    // Chromium's own verdict on this page: the manifest parses without a complaint, and nothing stands
    // in the way of installing but the test's browser context itself (every context here is incognito).
    const cdp = await page.context().newCDPSession(page);
    const parsed = await cdp.send('Page.getAppManifest');
    expect(parsed.url).toMatch(/\/manifest\.webmanifest$/);
    expect(parsed.errors).toEqual([]);
    const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
    expect(installabilityErrors.filter((e) => e.errorId !== 'in-incognito')).toEqual([]);
    await cdp.detach();

    // The browser offers to install: the app keeps the offer (no mini-bar) and shows its own button,
    // which asks the browser's prompt; accepted, the offer is spent and the button goes.
    expect(await page.getByRole('button', { name: 'Install Tether' }).count()).toBe(0);
    const kept = await page.evaluate(() => {
      const offer = Object.assign(new Event('beforeinstallprompt', { cancelable: true }), {
        prompt: () => {
          (window as unknown as { prompted: number }).prompted += 1;
          return Promise.resolve();
        },
        userChoice: Promise.resolve({ outcome: 'accepted', platform: 'web' }),
      });
      (window as unknown as { prompted: number }).prompted = 0;
      dispatchEvent(offer);
      return offer.defaultPrevented;
    });
    expect(kept).toBe(true);
    const install = page.getByRole('button', { name: 'Install Tether' });
    await install.waitFor();
    await noViolations(page);
    await install.click();
    await expect.poll(() => page.evaluate(() => (window as unknown as { prompted: number }).prompted)).toBe(1);
    await expect.poll(() => install.count()).toBe(0);
  });
});
