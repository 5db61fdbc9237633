// What the real Claude Code (the pinned 2.1.197) reads on its own from a message, against the
// scripted model server (which records every request, so a file's content reaching it is a file
// the CLI read and sent): first the CLI alone, each `@` form next to what the host's mirror of its
// rule (claude/mentions.ts) predicts; then through the host, where a message naming a file outside
// the chat's folders is refused and nothing reaches the CLI or the model.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostCore } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import { ClaudeProvider } from '../../src/host/providers/claude/index.ts';
import { claudeMentionedFiles } from '../../src/host/providers/claude/mentions.ts';
import { canonicalPath, readableIn } from '../../src/host/chats/file-reads.ts';
import type { ProviderOutput, ProviderSession } from '../../src/host/providers/provider.ts';
import type { AnthropicServer } from '../support/anthropic-server.ts';
import { CLAUDE_BIN, startScenario } from './claude-scenario.ts';
import { openCore, TestClient, until } from './harness.ts';

let server: AnthropicServer;
let provider: ClaudeProvider;
let home: string;
/** The chat's folder (the policy's one root is its parent, `work`) and a folder outside every root. */
let work: string;
let cwd: string;
let outside: string;

/** A file holding a marker no message text contains: the marker at the model server means the CLI read it. */
function secret(file: string, marker: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${marker}\n`);
  return marker;
}

const sent = (from: number) => JSON.stringify(server.requests.slice(from).map((r) => r.body));

beforeAll(async () => {
  const scenario = await startScenario();
  server = scenario.server;
  home = scenario.home;
  provider = new ClaudeProvider({ command: CLAUDE_BIN, env: scenario.env });
  const base = mkdtempSync(path.join(tmpdir(), 'tether-claude-reads-'));
  work = path.join(base, 'work');
  cwd = path.join(work, 'chat');
  outside = path.join(base, 'outside');
  mkdirSync(cwd, { recursive: true });
  mkdirSync(outside, { recursive: true });
});

afterAll(async () => {
  await server?.close();
});

async function turn(session: ProviderSession, text: string): Promise<void> {
  const outputs: ProviderOutput[] = [];
  session.startTurn({ turnId: `t-${Math.random()}`, text, attachments: [] }, (o) => outputs.push(o));
  await until(() => outputs.some((o) => o.type === 'turn-end'), `the turn of ${JSON.stringify(text)}`, 30_000);
  expect(outputs.find((o) => o.type === 'turn-end')).toEqual({ type: 'turn-end', state: 'done' });
}

describe('Claude Code 2.1.197 reads what a message mentions, exactly as the host predicts', { timeout: 120_000 }, () => {
  it('each @ form: read or not by the real CLI, and the mirror of its rule agrees', async () => {
    const o = (name: string) => path.join(outside, name);
    const listing = o('listing');
    mkdirSync(listing);
    writeFileSync(path.join(listing, 'M-DIRECTORY-ENTRY'), '');
    // A link in the chat's folder to a file outside: the CLI follows it.
    symlinkSync(o('linked.txt'), path.join(cwd, 'link.txt'));
    // [message text, marker of the file it names, whether the CLI reads it, what the mirror says it names]
    const cases: Array<[string, string, boolean, string[]]> = [
      [`look at @${o('abs.txt')}`, secret(o('abs.txt'), 'M-ABSOLUTE'), true, [o('abs.txt')]],
      ['see @../../outside/rel.txt please', secret(o('rel.txt'), 'M-RELATIVE'), true, [o('rel.txt')]],
      ['read @~/home-note.txt', secret(path.join(home, 'home-note.txt'), 'M-HOME'), true, [path.join(home, 'home-note.txt')]],
      [`quoted @"${o('with space.txt')}" here`, secret(o('with space.txt'), 'M-QUOTED'), true, [o('with space.txt')]],
      [`ends a sentence @${o('dot.txt')}.`, secret(o('dot.txt'), 'M-TRAILING-DOT'), true, [o('dot.txt')]],
      [`a range @${o('range.txt')}#L1-3`, secret(o('range.txt'), 'M-RANGE'), true, [o('range.txt')]],
      [`after CJK punctuation\u3002@${o('cjk.txt')}`, secret(o('cjk.txt'), 'M-CJK'), true, [o('cjk.txt')]],
      [`after a no-break space\u00a0@${o('nbsp.txt')}`, secret(o('nbsp.txt'), 'M-NBSP'), true, [o('nbsp.txt')]],
      [`a folder @${listing}`, 'M-DIRECTORY-ENTRY', true, [listing]],
      ['through a link @link.txt', secret(o('linked.txt'), 'M-SYMLINK'), true, [path.join(cwd, 'link.txt')]],
      [`mid-word x@${o('mid.txt')}`, secret(o('mid.txt'), 'M-MIDWORD'), false, []],
      [`in brackets (@${o('paren.txt')})`, secret(o('paren.txt'), 'M-PAREN'), false, []],
      [`after a colon:@${o('colon.txt')}`, secret(o('colon.txt'), 'M-COLON'), false, []],
      [`mail a@${o('mail.txt')}`, secret(o('mail.txt'), 'M-MAIL'), false, []],
      // Globs are not expanded: the name is the literal path, which is no file (the host still refuses it).
      [`a glob @${o('glob')}/*.txt`, secret(o('glob/one.txt'), 'M-GLOB'), false, [path.join(o('glob'), '*.txt')]],
    ];

    const session = provider.open({ chatId: 'r', cwd, runtimeMode: 'supervised', selection: provider.normalizeSelection(undefined), agentSessionId: null });
    try {
      const seen: Record<string, boolean> = {};
      const named: Record<string, string[]> = {};
      for (const [text, marker] of cases) {
        const from = server.requests.length;
        await turn(session, text);
        seen[marker] = sent(from).includes(marker);
        named[marker] = claudeMentionedFiles(text, cwd, home);
      }
      expect(seen).toEqual(Object.fromEntries(cases.map(([, marker, read]) => [marker, read])));
      expect(named).toEqual(Object.fromEntries(cases.map(([, marker, , names]) => [marker, names])));
      // Each of those the host's check refuses: every file the CLI read lies outside the chat's folder.
      for (const [, marker, read, names] of cases) {
        if (read)
          expect(
            names.some((file) => !readableIn(file, [canonicalPath(cwd)])),
            marker,
          ).toBe(true);
      }
    } finally {
      await session.kill();
    }
  });
});

describe("the host refuses a message that would make Claude Code read outside the chat's folders", { timeout: 120_000 }, () => {
  let core: HostCore;
  let client: TestClient;
  let data: string;

  beforeAll(async () => {
    data = mkdtempSync(path.join(tmpdir(), 'tether-claude-reads-data-'));
    core = await openCore(data, { providers: [provider], policy: new HostPolicy({ home, roots: [work] }) });
    client = new TestClient(core);
    await client.ok('chat.create', { chatId: 'h', cwd, runtimeMode: 'supervised' });
    await client.attach('h');
  });

  afterAll(async () => {
    await core?.close();
  });

  const settled = (turnId: string) => {
    const item = client.threads.get('h')!.get(turnId);
    return item?.kind === 'turn' && item.state !== 'running';
  };

  it('a secret outside, named in the text, in mentions, through a symlink or under ~: folder-denied naming it, and no request reaches the model', async () => {
    const file = path.join(outside, 'host-secret.txt');
    const marker = secret(file, 'M-HOST-SECRET');
    secret(path.join(home, 'host-home.txt'), 'M-HOST-HOME');
    symlinkSync(file, path.join(cwd, 'host-link.txt'));
    const from = server.requests.length;
    for (const payload of [
      { text: `summarise @${file}` },
      { text: 'summarise this', mentions: [file] },
      { text: 'summarise this', mentions: ['../../outside/host-secret.txt'] },
      { text: 'summarise @host-link.txt' },
      { text: 'summarise @~/host-home.txt' },
      { text: `summarise @"${file}"` },
    ]) {
      const reply = await client.request('chat.send', { chatId: 'h', ...payload });
      expect(reply.ok, JSON.stringify(payload)).toBe(false);
      if (!reply.ok) {
        expect(reply.error.code).toBe('folder-denied');
        expect(reply.error.message).toMatch(/host-(secret|home|link)\.txt/);
      }
    }
    expect(core.session('h').info.running).toBe(false);
    expect(client.threads.get('h')!.items).toEqual([]);
    expect(server.requests.length).toBe(from);
    expect(sent(0)).not.toContain(marker);
  });

  it("a file inside the chat's folder still reaches the model, and mail addresses and @Override are no file reads", async () => {
    const marker = secret(path.join(cwd, 'notes.txt'), 'M-INSIDE-NOTES');
    const from = server.requests.length;
    const { turnId } = await client.ok('chat.send', { chatId: 'h', text: 'read @notes.txt; mail a@b.com about @Override' });
    await until(() => settled(turnId), 'the turn', 30_000);
    expect(client.threads.get('h')!.get(turnId)).toMatchObject({ state: 'done' });
    expect(sent(from)).toContain(marker);
    const mentioned = await client.ok('chat.send', { chatId: 'h', text: 'and this one', mentions: ['notes.txt'] });
    await until(() => settled(mentioned.turnId), 'the mention turn', 30_000);
    expect(client.threads.get('h')!.get(mentioned.turnId)).toMatchObject({ state: 'done' });
  });
});
