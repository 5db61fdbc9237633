// The gate in front of a real HostCore (scripted provider): with signatures required, an unsigned,
// forged or moved request runs nothing and is in the host's audit as refused; the owner's signed
// requests run, approvals included (bound to the approval the host shows), and are audited with the
// verified person and device. With the switch off, requests run and are audited as unverified.
// `tether host audit` prints it.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { deviceKeyOf, newDeviceKeyPair, signRequest, type DeviceKey } from '../../src/client/device-key.ts';
import { PUSH_REQUEST_PREFIX, pushSessionApprovePayload, settledRequestDigest, terminalApprovalShown } from '../../src/contracts/index.ts';
import type { HostCore, HostCoreOptions, ReplyFrame } from '../../src/host/chats/core.ts';
import { HostAudit, formatAudit, readAudit } from '../../src/host/trust/audit.ts';
import { TrustBook } from '../../src/host/trust/book.ts';
import { coreView } from '../../src/host/trust/core-view.ts';
import { RequestGate } from '../../src/host/trust/gate.ts';
import { RequestVerifier } from '../../src/host/trust/verify.ts';
import { openGate } from '../../src/host/trust/open.ts';
import { writePinnedOwner } from '../../src/host/trust/pinned.ts';
import { HostConfigSchema, signatureSettings } from '../../src/host/config.ts';
import { openCore, runHookClient, tempDir, until } from './harness.ts';

const HOST = 'host-gate';
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(
  require: boolean,
  options: Partial<HostCoreOptions> = {},
): Promise<{ core: HostCore; dir: string; owner: DeviceKey; serve: (frame: unknown) => Promise<ReplyFrame> }> {
  const { dir, cleanup } = tempDir('tether-gate-');
  cleanups.push(cleanup);
  const core = await openCore(dir, options);
  cleanups.push(() => core.close());
  const owner = await deviceKeyOf(await newDeviceKeyPair(false), Date.now());
  const book = await TrustBook.open(HOST, { userId: 'ada', name: 'Ada', device: { id: owner.id, publicKey: owner.publicKey } });
  const audit = HostAudit.open(dir);
  cleanups.push(() => audit.close());
  const gate = new RequestGate({ audit, verifier: require ? new RequestVerifier({ book, view: coreView(core) }) : null });
  core.connect('relay', () => undefined, { allChats: true });
  return { core, dir, owner, serve: (frame) => gate.serve(frame, (admitted) => core.serve(admitted, 'relay')) };
}

const sign = (key: DeviceKey, frame: { id: string; type: string; payload?: unknown }, settles?: string) => signRequest(key, frame, { hostId: HOST, settles });

describe('the request gate', () => {
  it('with signatures required, runs nothing unsigned or forged and audits each refusal', async () => {
    const { core, dir, serve } = await setup(true);
    const create = { id: 'c-1', type: 'chat.create', payload: { chatId: 'c1' }, by: 'ada' };
    expect(await serve(create)).toMatchObject({ ok: false, error: { code: 'signature-required' } });
    const mallory = await deviceKeyOf(await newDeviceKeyPair(false), 0);
    expect(await serve({ ...create, signature: await sign(mallory, create) })).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });
    expect(core.sessions.size).toBe(0);
    // Reads need no signature and are not audited.
    expect(await serve({ id: 'l-1', type: 'chat.list', payload: {} })).toMatchObject({ ok: true });
    expect(readAudit(dir).entries.map((e) => [e.type, e.outcome, e.code, e.userId, e.relaySays])).toEqual([
      ['chat.create', 'refused', 'signature-required', null, 'ada'],
      ['chat.create', 'refused', 'signature-invalid', null, 'ada'],
    ]);
    // A refusal keeps what the signature claimed, unverified: here a device this host does not know.
    const [unsigned, forged] = readAudit(dir).entries;
    expect(unsigned.claimed).toBeNull();
    expect(forged.claimed).toMatchObject({ device: mallory.id, person: null, id: 'c-1' });
    expect(formatAudit(readAudit(dir))).toContain(`signature claims device ${mallory.id.slice(0, 15)}…`);
  });

  it("runs the owner's signed requests, an approval bound to what the host shows, and audits who did it", async () => {
    const { core, dir, owner, serve } = await setup(true);
    const create = { id: 'c-1', type: 'chat.create', payload: { chatId: 'c1' } };
    expect(await serve({ ...create, signature: await sign(owner, create) })).toMatchObject({ ok: true });
    const send = { id: 's-1', type: 'chat.send', payload: { chatId: 'c1', text: 'please approve' } };
    expect(await serve({ ...send, signature: await sign(owner, send) })).toMatchObject({ ok: true });
    const session = core.sessions.get('c1')!;
    await until(() => session.pendingRequests().length === 1, 'the approval pending');
    const waiting = session.pendingRequests()[0];
    if (waiting.kind !== 'approval') throw new Error('expected an approval');
    const approve = { id: 'a-1', type: 'chat.approve', payload: { chatId: 'c1', requestId: waiting.requestId, decision: 'allow' } };
    // Signed for another command than the one waiting: refused, and the approval still waits.
    const elsewhere = await settledRequestDigest({ kind: 'approval', requestId: waiting.requestId, toolName: 'Bash', input: { command: 'rm -rf ~' } });
    expect(await serve({ ...approve, signature: await sign(owner, approve, elsewhere) })).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });
    expect(session.pendingRequests()).toHaveLength(1);
    const shown = await settledRequestDigest({ kind: 'approval', requestId: waiting.requestId, toolName: waiting.toolName, input: waiting.input });
    const honest = { ...approve, id: 'a-2' };
    expect(await serve({ ...honest, signature: await sign(owner, honest, shown) })).toMatchObject({ ok: true });
    await until(() => session.pendingRequests().length === 0, 'the approval settled');
    const audit = readAudit(dir);
    expect(audit.broken).toBeNull();
    expect(audit.entries.map((e) => [e.type, e.outcome, e.userId, e.device])).toEqual([
      ['chat.create', 'done', 'ada', owner.id],
      ['chat.send', 'done', 'ada', owner.id],
      ['chat.approve', 'refused', null, null],
      ['chat.approve', 'done', 'ada', owner.id],
    ]);
  });

  it("takes a terminal session's answer signed as a notification signs it (over the request and the choice), and nothing else", async () => {
    const { dir, owner, serve } = await setup(true);
    const payload = pushSessionApprovePayload({ sessionId: 's1', requestId: 'tu-1' }, 'allow');
    const approve = { id: `${PUSH_REQUEST_PREFIX}sw-1`, type: 'session.approve', payload };
    expect(await serve(approve)).toMatchObject({ ok: false, error: { code: 'signature-required' } });
    // Signed for the deny choice, carried with allow: refused before the sessions hear of it.
    const forDeny = await sign(owner, { ...approve, payload: { ...payload, choiceId: 'deny' } });
    expect(await serve({ ...approve, signature: forDeny })).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });
    // Signed as the service worker signs it: past the gate, the terminal sessions answer (no such approval waits here).
    expect(await serve({ ...approve, signature: await sign(owner, approve) })).toMatchObject({ ok: false, error: { code: 'request-not-found' } });
    expect(readAudit(dir).entries.map((e) => [e.type, e.outcome, e.code])).toEqual([
      ['session.approve', 'refused', 'signature-required'],
      ['session.approve', 'refused', 'signature-invalid'],
      ['session.approve', 'failed', 'request-not-found'],
    ]);
  });

  it('takes a signed answer to a terminal approval only when it names that approval as the host shows it', async () => {
    const { dir: home, cleanup } = tempDir('tether-gate-claude-');
    cleanups.push(cleanup);
    const projects = path.join(home, 'projects', '-work');
    mkdirSync(projects, { recursive: true });
    const { core, dir, owner, serve } = await setup(true, { hookTargets: [{ kind: 'claude', configDir: home }] });
    await core.terminal.start();
    // The real hook client, as Claude Code runs it: a session, then a permission it waits on.
    const hook = (input: unknown) => runHookClient('claude', dir, input);
    const base = { session_id: 'tt-1', transcript_path: path.join(projects, 'tt-1.jsonl'), cwd: '/work' };
    await hook({ ...base, hook_event_name: 'SessionStart', source: 'startup' });
    const answered = hook({ ...base, hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'ls' } });
    await until(() => core.terminal.list().approvals.length === 1, "the terminal's approval listed");
    const waiting = core.terminal.list().approvals[0]!;
    const approve = { id: `${PUSH_REQUEST_PREFIX}t-1`, type: 'session.approve', payload: pushSessionApprovePayload(waiting, 'allow') };
    // Signed with no approval named, or for another command, or with the choices' words swapped: refused, and it still waits.
    expect(await serve({ ...approve, signature: await sign(owner, approve) })).toMatchObject({ ok: false, error: { code: 'signature-invalid' } });
    const shown = terminalApprovalShown(waiting);
    const other = { ...approve, id: `${PUSH_REQUEST_PREFIX}t-2` };
    expect(await serve({ ...other, signature: await sign(owner, other, await settledRequestDigest({ ...shown, summary: 'Bash: rm -rf ~' })) })).toMatchObject({
      ok: false,
      error: { code: 'signature-invalid', message: expect.stringMatching(/another request/) },
    });
    const swapped = shown.choices.map((c) => ({ ...c, label: c.kind === 'allow' ? 'Deny' : c.label }));
    const words = { ...approve, id: `${PUSH_REQUEST_PREFIX}t-3` };
    expect(await serve({ ...words, signature: await sign(owner, words, await settledRequestDigest({ ...shown, choices: swapped })) })).toMatchObject({
      ok: false,
      error: { code: 'signature-invalid' },
    });
    expect(core.terminal.list().approvals).toHaveLength(1);
    // Named as shown (in any button order): the terminal goes on.
    const honest = { ...approve, id: `${PUSH_REQUEST_PREFIX}t-4` };
    const named = await settledRequestDigest({ ...shown, choices: [...shown.choices].reverse() });
    expect(await serve({ ...honest, signature: await sign(owner, honest, named) })).toEqual(expect.objectContaining({ ok: true, result: { accepted: true } }));
    expect(JSON.parse(await answered)).toMatchObject({ hookSpecificOutput: { decision: { behavior: 'allow' } } });
    expect(readAudit(dir).entries.map((e) => [e.type, e.outcome, e.code])).toEqual([
      ['session.approve', 'refused', 'signature-invalid'],
      ['session.approve', 'refused', 'signature-invalid'],
      ['session.approve', 'refused', 'signature-invalid'],
      ['session.approve', 'done', undefined],
    ]);
  });

  it("with the switch off, runs unsigned requests and audits them as unverified with the relay's claim", async () => {
    const { core, dir, serve } = await setup(false);
    expect(await serve({ id: 'c-1', type: 'chat.create', payload: { chatId: 'c1' }, by: 'bob' })).toMatchObject({ ok: true });
    expect(await serve({ id: 'k-1', type: 'chat.kill', payload: { chatId: 'nope' }, by: 'bob' })).toMatchObject({
      ok: false,
      error: { code: 'chat-not-found' },
    });
    expect(core.sessions.has('c1')).toBe(true);
    expect(readAudit(dir).entries.map((e) => [e.type, e.outcome, e.code, e.userId, e.relaySays])).toEqual([
      ['chat.create', 'done', undefined, null, 'bob'],
      ['chat.kill', 'failed', 'chat-not-found', null, 'bob'],
    ]);

    // `tether host audit` prints it, and exits 4 once the chain is broken.
    const printed = execFileSync(process.execPath, ['bin/tether.js', 'host', 'audit', '--data', dir], { encoding: 'utf8' });
    expect(printed).toMatch(/chat\.create\s+done\s+unverified, relay says bob/);
    expect(printed).toMatch(/chat\.kill\s+failed chat-not-found/);
    const json = execFileSync(process.execPath, ['bin/tether.js', 'host', 'audit', '--data', dir, '--json', '--last', '1'], { encoding: 'utf8' });
    expect(
      json
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).type),
    ).toEqual(['chat.kill']);
    const { writeFileSync, readFileSync } = await import('node:fs');
    const file = `${dir}/audit.jsonl`;
    writeFileSync(file, readFileSync(file, 'utf8').replace('"done"', '"failed"'));
    const broken = spawnSync(process.execPath, ['bin/tether.js', 'host', 'audit', '--data', dir], { encoding: 'utf8' });
    expect(broken.status).toBe(4);
    expect(broken.stdout).toContain('WARNING: the audit breaks at line 2');
  });

  it('the host config switch: on by default, unsigned types only among those that act on the machine; on, no start without a pinned owner', async () => {
    const { core, dir, owner } = await setup(false);
    const warnings: string[] = [];
    const log = { info: () => undefined, warn: (line: string) => void warnings.push(line), error: () => undefined };
    expect(HostConfigSchema.parse({ signatures: {} }).signatures).toEqual({ require: true, allowUnsigned: [] });
    expect(signatureSettings({})).toEqual({ require: true, allowUnsigned: [] });
    expect(HostConfigSchema.safeParse({ signatures: { allowUnsigned: ['chat.sned'] } }).success).toBe(false);
    // A read needs no signature, so naming it would promise something that is not there.
    expect(HostConfigSchema.safeParse({ signatures: { allowUnsigned: ['chat.list'] } }).success).toBe(false);
    expect(HostConfigSchema.parse({ signatures: { allowUnsigned: ['chat.send'] } }).signatures).toEqual({ require: true, allowUnsigned: ['chat.send'] });
    // A config that says nothing requires them: without a pinned owner the host will not start.
    await expect(openGate(core, dir, {}, HOST, log)).rejects.toThrow(/signatures.require is on \(the default\), but this host has no pinned owner/);
    writePinnedOwner(dir, { hostId: 'host-other', owner: { userId: 'ada', name: 'Ada', device: { id: owner.id, publicKey: owner.publicKey } }, pinnedAt: 1 });
    await expect(openGate(core, dir, {}, HOST, log)).rejects.toThrow(/not this host/);
    writePinnedOwner(dir, { hostId: HOST, owner: { userId: 'ada', name: 'Ada', device: { id: owner.id, publicKey: owner.publicKey } }, pinnedAt: 1 });
    const allowing = HostConfigSchema.parse({ signatures: { allowUnsigned: ['chat.send'] } });
    const { gate, close } = await openGate(core, dir, allowing, HOST, log);
    cleanups.push(close);
    expect(warnings).toEqual(["signatures.allowUnsigned lets chat.send through unsigned: for these, whoever controls the relay can ask in anyone's name"]);
    const serve = (f: unknown) => gate.serve(f, (admitted) => core.serve(admitted, 'relay'));
    const create = { id: 'c-9', type: 'chat.create', payload: { chatId: 'c9' } };
    expect(await serve(create)).toMatchObject({ ok: false, error: { code: 'signature-required' } });
    expect(await serve({ ...create, signature: await sign(owner, create) })).toMatchObject({ ok: true });
    // The allowed type goes through unsigned (audited as unverified); the others still need a signature.
    expect(await serve({ id: 's-9', type: 'chat.send', payload: { chatId: 'c9', text: 'hello' }, by: 'bob' })).toMatchObject({ ok: true });
    expect(await serve({ id: 'k-9', type: 'chat.kill', payload: { chatId: 'c9' } })).toMatchObject({ ok: false, error: { code: 'signature-required' } });
    expect(readAudit(dir).entries.filter((e) => e.id === 's-9')).toMatchObject([{ outcome: 'done', userId: null, relaySays: 'bob' }]);

    // Off: the host starts without an owner, and says what that gives up.
    warnings.length = 0;
    const off = await openGate(core, dir, HostConfigSchema.parse({ signatures: { require: false } }), HOST, log);
    off.close();
    expect(warnings).toEqual([
      "signatures.require is off: this host believes the relay about who asks, so whoever controls the relay can act on this machine in anyone's name",
    ]);
  });
});
