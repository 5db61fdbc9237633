// The host's hooks in Claude Code's settings.json: added beside the person's own, taken out without a
// trace; and the local socket the hook client talks to, which refuses whatever is not the person's
// CLI speaking. The hook client here is the real one (src/host/terminal/hook-client.ts, as Claude
// Code runs it), fed the JSON Claude Code 2.1.197 writes on a hook's stdin.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CLAUDE_HOOK_EVENTS,
  CODEX_HOOK_EVENTS,
  HOOK_MARK,
  hookCommand,
  hooksState,
  installHooks,
  removeHooks,
  type HookTarget,
} from '../../src/host/terminal/hooks-file.ts';
import { installCodexHooks, removeCodexHooks } from '../../src/host/terminal/codex-hooks.ts';
import { withAccountTargets } from '../../src/host/terminal/targets.ts';
import { AccountBook } from '../../src/host/chats/accounts.ts';
import { policyFrom } from '../../src/host/config.ts';
import { hookSecretPath, hookSocketPath } from '../../src/host/terminal/hook-channel.ts';
import { TerminalSessions } from '../../src/host/terminal/sessions.ts';
import { CUT_NOTE, SESSION_ITEMS_BATCH_BYTES } from '../../src/host/terminal/item-batches.ts';
import { LINK_MAX_FRAME_BYTES } from '../../src/contracts/link.ts';
import { runHookClient, until } from './harness.ts';

const HOOK_CLIENT = path.resolve(import.meta.dirname, '../../src/host/terminal/hook-client.ts');

function folders(): { dataDir: string; target: HookTarget; file: string } {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tether-hooks-data-'));
  const configDir = mkdtempSync(path.join(tmpdir(), 'tether-hooks-claude-'));
  return { dataDir, target: { kind: 'claude', configDir }, file: path.join(configDir, 'settings.json') };
}

// The person's own file, in their own formatting: 4-space indent, their key order, their hooks.
const THEIRS = `{
    "model": "sonnet",
    "hooks": {
        "PreToolUse": [
            { "matcher": "Bash", "hooks": [ { "type": "command", "command": "~/bin/audit-bash" } ] }
        ],
        "UserPromptSubmit": []
    },
    "permissions": { "allow": ["Bash(ls:*)"] }
}
`;

describe('tether host hooks install / remove', () => {
  it("adds one group of the host per event beside the person's own, and removing gives back the file byte for byte", () => {
    const { dataDir, target, file } = folders();
    writeFileSync(file, THEIRS, { mode: 0o640 });
    expect(hooksState(dataDir, target).installed).toBe(false);
    expect(installHooks(dataDir, target).installed).toBe(true);
    // Installing again changes nothing: still one group of ours per event.
    installHooks(dataDir, target);
    const settings = JSON.parse(readFileSync(file, 'utf8'));
    expect(settings.model).toBe('sonnet');
    expect(settings.permissions).toEqual({ allow: ['Bash(ls:*)'] });
    expect(settings.hooks.PreToolUse[0]).toEqual({ matcher: 'Bash', hooks: [{ type: 'command', command: '~/bin/audit-bash' }] });
    for (const [event, timeout] of Object.entries(CLAUDE_HOOK_EVENTS)) {
      const ours = settings.hooks[event].filter((g: { hooks: { command: string }[] }) => g.hooks[0].command.endsWith(HOOK_MARK));
      expect(ours, event).toEqual([{ matcher: '*', hooks: [{ type: 'command', command: hookCommand(dataDir), timeout }] }]);
    }
    expect(statSync(file).mode & 0o777).toBe(0o640);
    expect(removeHooks(dataDir, target).installed).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe(THEIRS);
  });

  it('a file it made goes again on remove', () => {
    const { dataDir, target, file } = folders();
    installHooks(dataDir, target);
    expect(existsSync(file)).toBe(true);
    removeHooks(dataDir, target);
    expect(existsSync(file)).toBe(false);
  });

  it("keeps what the person changed after the install, and takes out only the host's groups", () => {
    const { dataDir, target, file } = folders();
    writeFileSync(file, THEIRS);
    installHooks(dataDir, target);
    const edited = JSON.parse(readFileSync(file, 'utf8'));
    edited.theme = 'light';
    edited.hooks.Stop.unshift({ matcher: '', hooks: [{ type: 'command', command: 'say done' }] });
    writeFileSync(file, JSON.stringify(edited));
    removeHooks(dataDir, target);
    const after = JSON.parse(readFileSync(file, 'utf8'));
    expect(after).toEqual({
      ...JSON.parse(THEIRS),
      theme: 'light',
      hooks: { ...JSON.parse(THEIRS).hooks, Stop: [{ matcher: '', hooks: [{ type: 'command', command: 'say done' }] }] },
    });
  });

  it('refuses a settings file that is not JSON and leaves it as it is', () => {
    const { dataDir, target, file } = folders();
    writeFileSync(file, '{ "hooks": // a comment\n }');
    expect(() => installHooks(dataDir, target)).toThrow(/is not JSON.*left as it is/);
    expect(readFileSync(file, 'utf8')).toBe('{ "hooks": // a comment\n }');
  });
});

describe("the hooks' local socket", () => {
  let sessions: TerminalSessions | null = null;
  afterEach(async () => {
    await sessions?.close();
    sessions = null;
  });

  async function open() {
    const { dataDir, target } = folders();
    const events: { event: string; payload: any }[] = [];
    const warnings: string[] = [];
    sessions = new TerminalSessions({
      dataDir,
      targets: () => [target],
      broadcast: (event, payload) => events.push({ event, payload }),
      log: { info: () => undefined, warn: (m) => warnings.push(m) },
    });
    await sessions.start();
    const projects = path.join(target.configDir, 'projects', '-work');
    mkdirSync(projects, { recursive: true });
    return { dataDir, target, events, warnings, projects };
  }

  /** Runs the real hook client with `input` on stdin, as Claude Code does; answers what it printed and its exit code. */
  function hook(dataDir: string, input: unknown, extraEnv: Record<string, string> = {}): Promise<{ out: string; code: number | null }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [HOOK_CLIENT, 'claude', dataDir, HOOK_MARK], {
        stdio: ['pipe', 'pipe', 'inherit'],
        env: { ...process.env, ...extraEnv },
      });
      let out = '';
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
      });
      child.on('exit', (code) => resolve({ out, code }));
      child.stdin.end(typeof input === 'string' ? input : JSON.stringify(input));
    });
  }

  function raw(dataDir: string, line: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(hookSocketPath(dataDir));
      let got = '';
      socket.on('data', (b) => {
        got += b.toString();
      });
      socket.on('close', () => resolve(got));
      socket.on('error', reject);
      socket.write(line);
    });
  }

  const start = (projects: string, id: string) => ({
    session_id: id,
    transcript_path: path.join(projects, `${id}.jsonl`),
    cwd: '/work',
    hook_event_name: 'SessionStart',
    source: 'startup',
  });

  it('keeps its socket and secret to the person (0600), and publishes a session the CLI announced', async () => {
    const { dataDir, events, projects } = await open();
    expect(statSync(hookSocketPath(dataDir)).mode & 0o777).toBe(0o600);
    expect(statSync(hookSecretPath(dataDir)).mode & 0o777).toBe(0o600);
    expect(await hook(dataDir, start(projects, 'aaaa-1'))).toEqual({ out: '', code: 0 });
    expect(events.find((e) => e.event === 'session.status')?.payload).toMatchObject({
      sessionId: 'aaaa-1',
      cwd: '/work',
      agent: { kind: 'claude', status: 'idle', live: true, transcriptPath: path.join(projects, 'aaaa-1.jsonl') },
    });
  });

  it('refuses a wrong secret, a line that is not the shape, and one too long, with a clear error', async () => {
    const { dataDir, events } = await open();
    const event = { hook_event_name: 'SessionStart' };
    expect(JSON.parse(await raw(dataDir, `${JSON.stringify({ secret: 'not-it', cli: 'claude', event })}\n`))).toEqual({
      error: { code: 'bad-request', message: 'wrong secret' },
    });
    const secret = readFileSync(hookSecretPath(dataDir), 'utf8');
    expect(JSON.parse(await raw(dataDir, `${JSON.stringify({ secret, cli: 'sh', event })}\n`)).error.message).toBe('hook line has the wrong shape');
    expect(JSON.parse(await raw(dataDir, 'not json\n')).error.message).toBe('hook line is not JSON');
    expect(JSON.parse(await raw(dataDir, 'x'.repeat((1 << 20) + 10))).error.message).toBe('hook line too long');
    expect(events).toEqual([]);
  });

  it('never reads a transcript outside the projects of a config folder with its hooks, nor takes a session id that is not one', async () => {
    const { dataDir, events, warnings, projects } = await open();
    const elsewhere = mkdtempSync(path.join(tmpdir(), 'tether-not-projects-'));
    for (const input of [
      { ...start(projects, 'bbbb-1'), transcript_path: path.join(elsewhere, 'bbbb-1.jsonl') },
      { ...start(projects, 'bbbb-2'), transcript_path: path.join(projects, '..', '..', 'bbbb-2.jsonl') },
      { ...start(projects, 'bbbb-3'), transcript_path: path.join(projects, 'other.jsonl') },
      { ...start(projects, 'x'), session_id: '--resume=/etc', transcript_path: path.join(projects, '--resume=-etc.jsonl') },
      'not json at all',
    ]) {
      expect(await hook(dataDir, input)).toEqual({ out: '', code: 0 });
    }
    expect(events).toEqual([]);
    expect(warnings.filter((w) => w.startsWith('terminal hook refused'))).toHaveLength(4);
  });

  it('stays out of a CLI the host runs as a chat', async () => {
    const { dataDir, events, projects } = await open();
    expect(await hook(dataDir, start(projects, 'cccc-1'), { TETHER_HOOKS_OFF: '1' })).toEqual({ out: '', code: 0 });
    expect(events).toEqual([]);
  });

  it('lets the CLI go on unhindered when no host runs', async () => {
    const { dataDir, projects } = await open();
    await sessions!.close();
    sessions = null;
    expect(await hook(dataDir, { ...start(projects, 'dddd-1'), hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: {} })).toEqual({
      out: '',
      code: 0,
    });
  });

  it('after a host restart, says of a session left waiting that it waits no more, once its clients are connected', async () => {
    const { dataDir, target, events, projects } = await open();
    // Claude Code writes the transcript from the first prompt on: one the host could not read again after a restart would not be listed (kept.ts).
    writeFileSync(path.join(projects, 'hhhh-1.jsonl'), '');
    await hook(dataDir, start(projects, 'hhhh-1'));
    const asked = hook(dataDir, { ...start(projects, 'hhhh-1'), hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'ls' } });
    await until(() => sessions!.list().approvals.length > 0, 'the approval listed', 10_000);
    expect(events.filter((e) => e.event === 'session.approvals').at(-1)!.payload.approvals).toHaveLength(1);
    // The host stops with the approval waiting: the hook lets the CLI ask in its own prompt.
    await sessions!.close();
    expect(await asked).toEqual({ out: '', code: 0 });

    const after: { event: string; payload: any }[] = [];
    sessions = new TerminalSessions({
      dataDir,
      targets: () => [target],
      broadcast: (event, payload) => after.push({ event, payload }),
      log: { info: () => undefined, warn: () => undefined },
    });
    await sessions.start();
    // Nothing waits on the new process, and a live:false session is not `needs-you`.
    expect(sessions.list()).toMatchObject({ approvals: [], sessions: [{ sessionId: 'hhhh-1', agent: { live: false, status: 'idle' } }] });
    expect(after).toEqual([]);
    sessions.resume();
    expect(after).toEqual([
      { event: 'session.approvals', payload: { sessionId: 'hhhh-1', approvals: [] } },
      { event: 'session.status', payload: expect.objectContaining({ sessionId: 'hhhh-1', agent: expect.objectContaining({ live: false, status: 'idle' }) }) },
    ]);
    // Said once: a second resume (or the next restart, from what was saved) says nothing more.
    sessions.resume();
    expect(after).toHaveLength(2);
  });

  it('sends a transcript far larger than a link frame as batches that each fit, in order, a huge tool output cut to fit', async () => {
    const { dataDir, events, projects } = await open();
    const id = 'eeee-1';
    // 40 replies of 200 KB (8 MB), then a Bash call whose output is 3 MB: one event of all of it would be
    // over the link's frame limit once two such sessions were read, and over a batch many times.
    const lines: unknown[] = [{ type: 'user', uuid: 'u-0', timestamp: '2026-12-02T00:00:00Z', message: { role: 'user', content: 'write a lot' } }];
    for (let i = 1; i <= 40; i++) {
      lines.push({
        type: 'assistant',
        uuid: `a-${i}`,
        timestamp: '2026-12-02T00:00:01Z',
        message: { content: [{ type: 'text', text: `${i}:${'é'.repeat(100_000)}` }] },
      });
    }
    lines.push({
      type: 'assistant',
      uuid: 'a-tool',
      message: { content: [{ type: 'tool_use', id: 'toolu_big', name: 'Bash', input: { command: 'cat big' } }] },
    });
    lines.push({ type: 'user', uuid: 'u-result', message: { content: [{ type: 'tool_result', tool_use_id: 'toolu_big', content: 'x'.repeat(3_000_000) }] } });
    writeFileSync(path.join(projects, `${id}.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    await hook(dataDir, start(projects, id));
    const batches = async () => events.filter((e) => e.event === 'session.items' && e.payload.sessionId === id);
    await until(
      async () => (await batches()).some((e) => e.payload.items.some((i: any) => i.id === 'toolu_big' && i.state === 'done')),
      'the big tool result sent',
      { ms: 20_000, every: 50 },
    );
    const sent = await batches();
    expect(sent.length).toBeGreaterThan(8);
    for (const batch of sent) {
      expect(Buffer.byteLength(JSON.stringify(batch.payload.items))).toBeLessThanOrEqual(SESSION_ITEMS_BATCH_BYTES);
      expect(Buffer.byteLength(JSON.stringify({ type: 'event', event: 'session.items', payload: batch.payload }))).toBeLessThan(LINK_MAX_FRAME_BYTES);
    }
    const ids = sent.flatMap((b) => b.payload.items.map((i: any) => i.id));
    expect(ids).toEqual(['u-0', ...Array.from({ length: 40 }, (_, i) => `a-${i + 1}`), 'toolu_big']);
    const replies = sent.flatMap((b) => b.payload.items).filter((i: any) => i.kind === 'assistant');
    expect(replies.every((r: any, i: number) => r.text === `${i + 1}:${'é'.repeat(100_000)}`)).toBe(true);
    const tool = sent.flatMap((b) => b.payload.items).find((i: any) => i.id === 'toolu_big' && i.state === 'done');
    expect(tool.output.endsWith(CUT_NOTE)).toBe(true);
    expect(tool.output.startsWith('x'.repeat(500_000))).toBe(true);
    expect(tool.input).toEqual({ command: 'cat big' });
    // History answers the newest items that fit one reply: the cut tool fills it alone; without it, the
    // newest replies that fit (five of 200 KB), oldest first.
    const history = await sessions!.history(id, 1000);
    expect(history.map((i) => i.id)).toEqual(['toolu_big']);
    expect(Buffer.byteLength(JSON.stringify(history))).toBeLessThanOrEqual(SESSION_ITEMS_BATCH_BYTES);
    writeFileSync(
      path.join(projects, 'eeee-2.jsonl'),
      lines
        .slice(0, 41)
        .map((l) => JSON.stringify(l))
        .join('\n') + '\n',
    );
    await hook(dataDir, start(projects, 'eeee-2'));
    const replies2 = await sessions!.history('eeee-2', 1000);
    expect(replies2.map((i) => i.id)).toEqual(['a-36', 'a-37', 'a-38', 'a-39', 'a-40']);
    expect(Buffer.byteLength(JSON.stringify(replies2))).toBeLessThanOrEqual(SESSION_ITEMS_BATCH_BYTES);
  });
});

// Codex 0.171 (the pinned @openai/codex): the host's hooks in `<CODEX_HOME>/hooks.json` beside the
// person's, trusted by Codex itself (hooks/list, config/batchWrite through a real app-server), and a
// session its hooks announce read from its rollout.
const CODEX_BIN = path.resolve(import.meta.dirname, '../../node_modules/.bin/codex');

describe('Codex: hooks.json, its trust, and its rollout', () => {
  const THEIR_HOOKS = `{
  "hooks": {
    "Stop": [ { "hooks": [ { "type": "command", "command": "say done" } ] } ]
  }
}
`;
  const THEIR_CONFIG = '# mine\nmodel = "o3"\n\n[tui]\nnotifications = true\n';

  function codexFolders() {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'tether-hooks-data-'));
    const configDir = mkdtempSync(path.join(tmpdir(), 'tether-hooks-codex-'));
    const target: HookTarget = { kind: 'codex', configDir, command: CODEX_BIN };
    return { dataDir, configDir, target };
  }

  it("adds its hooks beside the person's, Codex trusts only the host's, and remove gives both files back byte for byte", async () => {
    const { dataDir, configDir, target } = codexFolders();
    writeFileSync(path.join(configDir, 'hooks.json'), THEIR_HOOKS);
    writeFileSync(path.join(configDir, 'config.toml'), THEIR_CONFIG);
    const state = await installCodexHooks(dataDir, target);
    expect(state).toMatchObject({ kind: 'codex', installed: true, trusted: true });
    const hooks = JSON.parse(readFileSync(path.join(configDir, 'hooks.json'), 'utf8'));
    expect(hooks.hooks.Stop[0]).toEqual({ hooks: [{ type: 'command', command: 'say done' }] });
    for (const [event, timeout] of Object.entries(CODEX_HOOK_EVENTS)) {
      expect(
        hooks.hooks[event].filter((g: any) => g.hooks[0].command.endsWith(HOOK_MARK)),
        event,
      ).toEqual([{ hooks: [{ type: 'command', command: hookCommand(dataDir, 'codex'), timeout }] }]);
    }
    const config = readFileSync(path.join(configDir, 'config.toml'), 'utf8');
    expect(config.startsWith(THEIR_CONFIG.trimEnd())).toBe(true);
    // One trust entry per host hook, none for the person's `say done` (Stop's group 0).
    expect(config.match(/trusted_hash = "sha256:[0-9a-f]{64}"/g)).toHaveLength(Object.keys(CODEX_HOOK_EVENTS).length);
    expect(config).not.toContain('hooks.json:stop:0:0"]');
    expect(config).toContain('hooks.json:stop:1:0"]');
    const removed = await removeCodexHooks(dataDir, target);
    expect(removed).toMatchObject({ installed: false, trusted: false });
    expect(readFileSync(path.join(configDir, 'hooks.json'), 'utf8')).toBe(THEIR_HOOKS);
    expect(readFileSync(path.join(configDir, 'config.toml'), 'utf8')).toBe(THEIR_CONFIG);
  }, 60_000);

  it("after the person edited config.toml, remove takes out only the host's trust entries", async () => {
    const { dataDir, configDir, target } = codexFolders();
    writeFileSync(path.join(configDir, 'config.toml'), THEIR_CONFIG);
    await installCodexHooks(dataDir, target);
    writeFileSync(path.join(configDir, 'config.toml'), `${readFileSync(path.join(configDir, 'config.toml'), 'utf8')}\n[history]\npersistence = "none"\n`);
    await removeCodexHooks(dataDir, target);
    const config = readFileSync(path.join(configDir, 'config.toml'), 'utf8');
    expect(config).toContain('model = "o3"');
    expect(config).toContain('persistence = "none"');
    expect(config).not.toContain('trusted_hash');
    expect(existsSync(path.join(configDir, 'hooks.json'))).toBe(false);
  }, 60_000);

  it("refuses a CODEX_HOME it could not name safely in Codex's config keys", async () => {
    const { dataDir } = codexFolders();
    for (const configDir of ['relative/home', '/tmp/a"b', '/tmp/a\\b', '/tmp/a\nb']) {
      await expect(installCodexHooks(dataDir, { kind: 'codex', configDir, command: CODEX_BIN })).rejects.toThrow(/CODEX_HOME/);
    }
  });
});

describe('a Codex session its hooks announce', () => {
  let sessions: TerminalSessions | null = null;
  afterEach(async () => {
    await sessions?.close();
    sessions = null;
  });

  it('is read from its rollout, and its PermissionRequest (paired with its PreToolUse) is answered as Codex takes it', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'tether-hooks-data-'));
    const home = mkdtempSync(path.join(tmpdir(), 'tether-hooks-codex-'));
    const events: { event: string; payload: any }[] = [];
    sessions = new TerminalSessions({
      dataDir,
      targets: () => [{ kind: 'codex', configDir: home }],
      broadcast: (event, payload) => events.push({ event, payload }),
      log: { info: () => undefined, warn: () => undefined },
    });
    await sessions.start();
    const id = '01a234e2-7d0f-7eb2-b70e-e9a51a9a7175';
    const day = path.join(home, 'sessions', '2026', '12', '02');
    mkdirSync(day, { recursive: true });
    const rollout = path.join(day, `rollout-2026-12-02T03-53-08-${id}.jsonl`);
    // Lines as Codex 0.171 writes them (cut to the fields read), the CLI's own instructions included.
    writeFileSync(
      rollout,
      [
        { type: 'session_meta', payload: { id, cwd: '/work' } },
        { type: 'response_item', payload: { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<skills_instructions>' }] } },
        { type: 'event_msg', payload: { type: 'item_completed', item: { type: 'UserMessage', id: 'u1', content: [{ type: 'text', text: 'KW-APPROVE' }] } } },
        { type: 'event_msg', payload: { type: 'item_completed', item: { type: 'Reasoning', id: 'r1', summary_text: ['Needs a shell.'] } } },
        { type: 'response_item', payload: { type: 'function_call', name: 'exec_command', arguments: '{"cmd":"date > stamp.txt"}', call_id: 'call_3_0' } },
      ]
        .map((l) => JSON.stringify(l))
        .join('\n') + '\n',
    );
    const run = (input: unknown) => runHookClient('codex', dataDir, input);
    const base = { session_id: id, transcript_path: rollout, cwd: '/work', model: 'm', permission_mode: 'default', turn_id: 't1' };
    await run({ ...base, hook_event_name: 'SessionStart', source: 'startup' });
    await run({ ...base, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'date > stamp.txt' }, tool_use_id: 'call_3_0' });
    const answered = run({
      ...base,
      hook_event_name: 'PermissionRequest',
      tool_name: 'Bash',
      tool_input: { command: 'date > stamp.txt', description: 'Write the stamp' },
    });
    await until(() => sessions!.list().approvals.length > 0, 'the approval listed', 10_000);
    const [approval] = sessions.list().approvals;
    expect(approval).toMatchObject({ requestId: 'call_3_0', toolName: 'Bash', summary: 'Bash: date > stamp.txt' });
    expect(approval!.choices.map((c) => c.kind)).toEqual(['allow', 'deny']);
    expect(approval!.expiresAt - approval!.createdAt).toBe(60_000);
    expect(sessions.answer({ sessionId: id, requestId: 'call_3_0', choiceId: 'allow' })).toEqual({ accepted: true });
    expect(JSON.parse(await answered)).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
    const status = events.filter((e) => e.event === 'session.status').at(-1)!.payload;
    expect(status).toMatchObject({ sessionId: id, cwd: '/work', agent: { kind: 'codex', agentSessionId: id, transcriptPath: rollout, live: true } });
    const items = await sessions.history(id);
    expect(items.map((i) => [i.kind, i.id])).toEqual([
      ['user', 'u1'],
      ['thinking', 'r1'],
      ['tool', 'call_3_0'],
    ]);
    expect(items[2]).toMatchObject({ name: 'Bash', input: { command: 'date > stamp.txt' }, state: 'running' });
    // A rollout outside `sessions/<y>/<m>/<d>/`, or not named after the session, is refused.
    const before = events.length;
    await run({ ...base, session_id: 'ffff-1', transcript_path: path.join(home, 'sessions', 'rollout-x-ffff-1.jsonl'), hook_event_name: 'SessionStart' });
    await run({ ...base, session_id: 'ffff-2', transcript_path: rollout, hook_event_name: 'SessionStart' });
    expect(events.slice(before).filter((e) => e.event === 'session.status' && e.payload.sessionId.startsWith('ffff'))).toEqual([]);
  });
});

describe('a terminal session whose CLI dies without a SessionEnd', () => {
  let sessions: TerminalSessions | null = null;
  afterEach(async () => {
    await sessions?.close();
    sessions = null;
  });

  it("is exited once its CLI's process is gone, its pending approval settled", async () => {
    const { dataDir, target } = folders();
    const events: { event: string; payload: any }[] = [];
    sessions = new TerminalSessions({
      dataDir,
      targets: () => [target],
      broadcast: (event, payload) => events.push({ event, payload }),
      log: { info: () => undefined, warn: () => undefined },
      livenessIntervalMs: 50,
    });
    await sessions.start();
    const projects = path.join(target.configDir, 'projects', '-work');
    mkdirSync(projects, { recursive: true });
    const base = { session_id: 'gggg-1', transcript_path: path.join(projects, 'gggg-1.jsonl'), cwd: '/work' };
    // A stand-in for the CLI (no real CLI can be killed mid-session here on cue): a process that runs the
    // real hook client through `sh -c`, as Claude Code runs a hook command, then stays until killed.
    const script = `
      const { spawn } = require('node:child_process');
      const run = (event) => new Promise((done) => {
        const hook = spawn('sh', ['-c', ${JSON.stringify(`'${process.execPath}' '${HOOK_CLIENT}' claude '${dataDir}' ${HOOK_MARK}`)}], { stdio: ['pipe', 'ignore', 'inherit'] });
        hook.on('exit', done);
        hook.stdin.end(JSON.stringify(event));
      });
      run(${JSON.stringify({ ...base, hook_event_name: 'SessionStart' })}).then(() => {
        run(${JSON.stringify({ ...base, hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'ls' } })});
        process.stdout.write('started\\n');
      });
      setInterval(() => {}, 1000);
    `;
    const cli = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    await until(() => sessions!.list().approvals.length > 0, 'the approval listed', 10_000);
    const status = () => events.filter((e) => e.event === 'session.status' && e.payload.sessionId === 'gggg-1').at(-1)?.payload.agent.status;
    expect(status()).toBe('needs-you');
    cli.kill('SIGKILL');
    await until(() => status() === 'exited', 'the session exited', 10_000);
    expect(status()).toBe('exited');
    expect(sessions.list().approvals).toEqual([]);
    // Once exited it can be continued as a chat.
    await expect(sessions.handover('gggg-1')).resolves.toMatchObject({ kind: 'claude', agentSessionId: 'gggg-1' });
  });
});

describe('the hooks of a Claude Code or Codex account other than the default', () => {
  it("go in each enabled account's config folder the policy admits, beside the configured ones, and its transcripts are read", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'tether-hooks-data-'));
    const homes = mkdtempSync(path.join(tmpdir(), 'tether-account-homes-'));
    const work = mkdtempSync(path.join(tmpdir(), 'tether-hooks-work-'));
    const policy = policyFrom({ policy: { roots: [work], accountHomes: [homes] } }, { dataDir });
    const book = new AccountBook(dataDir, ['claude', 'codex'], policy);
    const work2 = path.join(homes, 'work-claude');
    await book.save({
      'claude-work': { kind: 'claude', label: 'Work', home: work2 },
      'claude-off': { kind: 'claude', label: 'Off', home: path.join(homes, 'off'), enabled: false },
      'codex-team': { kind: 'codex', label: 'Team', home: path.join(homes, 'codex-team') },
    });
    // A folder the policy does not admit (a chat folder) is never an account's, so never a target.
    await expect(book.save({ bad: { kind: 'claude', label: 'Bad', home: work } })).rejects.toMatchObject({ code: 'invalid-account' });
    const configured: HookTarget[] = [
      { kind: 'claude', configDir: '/home/p/.claude' },
      { kind: 'codex', configDir: '/home/p/.codex', command: '/usr/bin/codex' },
    ];
    expect(withAccountTargets(configured, book)).toEqual([
      ...configured,
      { kind: 'claude', configDir: work2 },
      { kind: 'codex', configDir: path.join(homes, 'codex-team'), command: '/usr/bin/codex' },
    ]);
    // No Codex backend configured: no Codex account is a target.
    expect(withAccountTargets([configured[0]!], book).map((t) => t.configDir)).toEqual(['/home/p/.claude', work2]);
    // The account's hooks install like the default's, and its session is read from its own projects folder.
    const target: HookTarget = { kind: 'claude', configDir: work2 };
    expect(installHooks(dataDir, target).installed).toBe(true);
    const events: { event: string; payload: any }[] = [];
    const sessions = new TerminalSessions({
      dataDir,
      targets: () => withAccountTargets([configured[0]!], book),
      broadcast: (event, payload) => events.push({ event, payload }),
      log: { info: () => undefined, warn: () => undefined },
    });
    await sessions.start();
    try {
      const projects = path.join(work2, 'projects', '-w');
      mkdirSync(projects, { recursive: true });
      await new Promise<void>((resolve) => {
        const child = spawn(process.execPath, [HOOK_CLIENT, 'claude', dataDir, HOOK_MARK], { stdio: ['pipe', 'ignore', 'inherit'] });
        child.on('exit', () => resolve());
        child.stdin.end(
          JSON.stringify({ session_id: 'hhhh-1', transcript_path: path.join(projects, 'hhhh-1.jsonl'), cwd: '/w', hook_event_name: 'SessionStart' }),
        );
      });
      expect(events.find((e) => e.event === 'session.status')?.payload).toMatchObject({
        sessionId: 'hhhh-1',
        agent: { transcriptPath: path.join(projects, 'hhhh-1.jsonl') },
      });
    } finally {
      await sessions.close();
    }
  });
});
