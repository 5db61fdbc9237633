// The hostile relay: a WebSocket server that acts as the relay sends a real host (startHost, its
// link, its gate, its runtime) every request type of the registry (REQUEST_TYPES) with payloads
// fast-check generates from hostile values (flags for resume and model ids, folders outside the
// root, NUL and newlines, loader and endpoint variables, config folders with hooks, modes above the
// ceiling, prototype keys, random JSON). The host's policy is one folder and `supervised`.
//
// The host's backends are recording providers (one per agent kind, the scripted backend inside):
// every would-be process start is recorded with its context, and that context is then put through
// the real command builders of each CLI (claudeArgs/claudeEnv, codexThreadPlan/codexEnv, the
// Copilot and Gemini specs' command lines), which either refuse it (`bad-request`) or give the
// argv and environment the CLI would get. Asserted: no start outside the folder, above the
// ceiling, with a variable, config folder or flag the policy did not allow; every reply is a result
// or a `{ code, message }` of the protocol's codes; the host still serves afterwards.
import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { AGENT_ERROR_CODES, AgentKindSchema, MODE_ORDER, REQUEST_TYPES, TETHER_ERROR_CODES } from '../../src/contracts/index.ts';
import type { AgentKind } from '../../src/contracts/index.ts';
import { ProtocolError } from '../../src/contracts/errors.ts';
import { startHost } from '../../src/host/index.ts';
import type { RunningHost } from '../../src/host/index.ts';
import { HostPolicy, SAFE_ACCOUNT_VARIABLES } from '../../src/host/policy.ts';
import type { ProviderChatContext } from '../../src/host/providers/provider.ts';
import { claudeArgs, claudeEnv } from '../../src/host/providers/claude/driver.ts';
import { codexEnv, codexThreadPlan } from '../../src/host/providers/codex/driver.ts';
import { copilotSpec } from '../../src/host/providers/copilot/index.ts';
import { geminiSpec } from '../../src/host/providers/gemini/index.ts';
import { tempDir, until } from './harness.ts';
import { RecordingProvider } from './recording-provider.ts';

/** Accepts the host's link and sends it request frames, as the relay would (or one that was taken over). */
class HostileRelay {
  readonly server: WebSocketServer;
  socket: WebSocket | null = null;
  private readonly waiting = new Map<string, (reply: any) => void>();

  private constructor(server: WebSocketServer) {
    this.server = server;
    server.on('connection', (socket) => {
      this.socket = socket;
      socket.on('message', (data) => {
        const text = data.toString();
        if (text === 'ping') return void socket.send('pong');
        const frames = text.startsWith('[') ? (JSON.parse(text) as any[]) : [JSON.parse(text)];
        for (const frame of frames) {
          if (frame.type === 'event' && frame.n) socket.send(JSON.stringify({ link: 'ack', n: [frame.n] }));
          if (typeof frame.id === 'string' && 'ok' in frame) this.waiting.get(frame.id)?.(frame);
        }
      });
    });
  }

  static async start(): Promise<HostileRelay> {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    return new HostileRelay(server);
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  request(id: string, type: string, payload: unknown): Promise<any> {
    return new Promise((resolve) => {
      this.waiting.set(id, (reply) => {
        this.waiting.delete(id);
        resolve(reply);
      });
      this.socket!.send(JSON.stringify({ id, type, payload, by: 'user-attacker' }));
    });
  }

  async close(): Promise<void> {
    for (const client of this.server.clients) client.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const home = tempDir('tether-hostile-home-');
const data = tempDir('tether-hostile-data-');
const work = path.join(home.dir, 'work');
const outside = path.join(home.dir, 'outside');
const CODES = new Set<string>([...AGENT_ERROR_CODES, ...TETHER_ERROR_CODES]);
const KINDS: AgentKind[] = ['claude', 'codex', 'gemini', 'copilot'];
const providers = KINDS.map((kind) => new RecordingProvider({ kind }));
let host: RunningHost;
let relay: HostileRelay;
let nextId = 0;
const replies: { type: string; reply: any }[] = [];

/** Values an attacker would try in any string field. */
const HOSTILE_STRINGS = [
  '--settings={"apiKeyHelper":"touch /tmp/tether-pwned"}',
  '--dangerously-skip-permissions',
  '--allow-all',
  '--yolo',
  '-p',
  '--',
  '-c',
  '--permission-mode=bypassPermissions',
  'sandbox_mode="danger-full-access"',
  '/',
  '/etc',
  '/tmp',
  '..',
  '../..',
  '~',
  '~/..',
  '~root',
  'work/../outside',
  'a\u0000b',
  'a\nb',
  '\r\n',
  '\u2028',
  '\u0085',
  'x'.repeat(10_000),
  'full-access',
  'auto',
  'bypassPermissions',
  '__proto__',
  'constructor',
  'prototype',
  '$(touch /tmp/p)',
  '`id`',
  ';id',
  '%00',
  'claude',
  'codex',
  '',
];
const DANGEROUS_VARIABLES = [
  'NODE_OPTIONS',
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'LD_AUDIT',
  'DYLD_INSERT_LIBRARIES',
  'PATH',
  'HOME',
  'PYTHONPATH',
  'PYTHONSTARTUP',
  'BASH_ENV',
  'ENV',
  'PERL5OPT',
  'RUBYOPT',
  'GIT_CONFIG_GLOBAL',
  'GIT_SSH_COMMAND',
  'SHELL',
  'EDITOR',
  'ANTHROPIC_BASE_URL',
  'ANTHROPIC_API_KEY',
  'OPENAI_BASE_URL',
  'OPENAI_API_KEY',
  'COPILOT_PROVIDER_BASE_URL',
  'GOOGLE_GEMINI_BASE_URL',
  'CODEX_HOME',
  'CLAUDE_CONFIG_DIR',
  'COPILOT_HOME',
  'GEMINI_CLI_HOME',
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'ALL_PROXY',
  'https_proxy',
  'NO_PROXY',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'CLAUDE_CODE_USE_BEDROCK',
  'ANTHROPIC_MODEL',
];

const hostileString = () =>
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        ...HOSTILE_STRINGS,
        work,
        `${work}/../outside`,
        outside,
        path.join(work, 'escape'),
        path.join(work, 'project'),
        data.dir,
        path.join(data.dir, 'chats'),
      ),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  );
const anyValue = () => fc.oneof(hostileString(), fc.integer(), fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 2 }));
const chatIdArb = () =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('main', 'other') },
    // A new chat each time (chat.create makes it, if the policy lets it).
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 1_000_000_000 }).map((n) => `new-${n}`) },
    { weight: 1, arbitrary: hostileString() },
  );
const kindArb = () =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...KINDS) },
    { weight: 1, arbitrary: fc.constantFrom(...AgentKindSchema.options) },
    { weight: 1, arbitrary: hostileString() },
  );
const modeArb = () => fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...MODE_ORDER) }, { weight: 1, arbitrary: hostileString() });
const accountIdArb = () => fc.oneof({ weight: 3, arbitrary: fc.constantFrom('evil', 'work', 'claude', 'codex') }, { weight: 1, arbitrary: hostileString() });
const variableArb = () =>
  fc.record(
    {
      name: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...DANGEROUS_VARIABLES) }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) }),
      value: hostileString(),
      sensitive: fc.boolean(),
    },
    { requiredKeys: ['name', 'value', 'sensitive'] },
  );
const accountArb = () =>
  fc.record(
    {
      kind: kindArb(),
      label: fc.string({ maxLength: 10 }),
      home: fc.oneof(
        fc.constantFrom('/tmp/hooks', '~/.claude', '~', work, path.join(work, '.claude'), data.dir, path.join(data.dir, 'chats')),
        hostileString(),
      ),
      shadowHome: hostileString(),
      env: fc.array(variableArb(), { maxLength: 4 }),
      enabled: fc.boolean(),
    },
    { requiredKeys: ['kind'] },
  );

/** For each field a request of any type may read: what an attacker would put there. */
const HOSTILE_FIELDS = {
  chatId: chatIdArb(),
  cwd: hostileString(),
  runtimeMode: modeArb(),
  resume: hostileString(),
  provider: kindArb(),
  account: accountIdArb(),
  selection: fc.record({
    model: hostileString(),
    options: fc.dictionary(fc.constantFrom('effort', 'thinking', '__proto__', '--x'), anyValue(), { maxKeys: 2 }),
  }),
  text: hostileString(),
  accounts: fc.dictionary(accountIdArb(), accountArb(), { minKeys: 1, maxKeys: 3 }),
  kind: kindArb(),
  label: hostileString(),
  turnId: hostileString(),
  requestId: hostileString(),
  messageId: hostileString(),
  decision: fc.constantFrom('allow', 'allow-always', 'deny', 'maybe'),
  delivery: fc.constantFrom('steer', 'queue', 'now'),
  worktree: fc.boolean(),
  title: hostileString(),
  id: accountIdArb(),
  file: hostileString(),
  attachments: fc.array(
    fc.record({ name: hostileString(), mime: fc.constantFrom('text/plain', 'image/png', '../x'), data: fc.constantFrom('aGk=', '!!', '') }),
    { maxLength: 2 },
  ),
} as const;
type Field = keyof typeof HOSTILE_FIELDS;

/** The same fields as a well-meaning client fills them, so a payload usually passes its schema and reaches the policy. */
const plainFields = () =>
  fc.record(
    {
      chatId: fc.oneof(
        fc.constantFrom('main', 'other'),
        fc.integer({ min: 0, max: 1_000_000_000 }).map((n) => `new-${n}`),
      ),
      cwd: fc.constantFrom(work, path.join(work, 'project')),
      text: fc.constantFrom('hi', 'approve', 'question'),
      kind: fc.constantFrom('claude', 'codex'),
      label: fc.constantFrom('Work', 'Evil'),
      provider: fc.constantFrom(...KINDS),
    },
    { requiredKeys: ['chatId', 'text', 'kind', 'label'] },
  );

/** A plain payload with one to three of its fields hostile (any field of any type, so a type's schema may also see a stranger). */
const structuredPayload = () =>
  fc
    .tuple(plainFields(), fc.subarray(Object.keys(HOSTILE_FIELDS) as Field[], { minLength: 1, maxLength: 3 }))
    .chain(([plain, fields]) => fc.record(Object.fromEntries(fields.map((f) => [f, HOSTILE_FIELDS[f]]))).map((hostile) => ({ ...plain, ...hostile })));

/** What a payload may be: a structured hostile one (mostly), or anything JSON at all. */
const payloadArb = () => fc.oneof({ weight: 5, arbitrary: structuredPayload() }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) });
/** Types of the registry, with chat.send, chat.create and the account requests (the ones that start or configure CLIs) more often. */
const typeArb = () =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...REQUEST_TYPES) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'chat.send',
        'chat.create',
        'chat.configure',
        'accounts.save',
        'accounts.create',
        'chat.fork',
        'chat.continueOn',
        'chat.summarize',
      ),
    },
  );

const freshChatId = () => fc.integer({ min: 0, max: 1_000_000_000 }).map((n) => `new-${n}`);
/**
 * One request: any type with any payload, or one aimed at a part of the policy (a new chat's
 * folder and mode, a chat moved to another mode or account, an account's variables and folders).
 */
const requestArb = () =>
  fc.oneof(
    { weight: 4, arbitrary: fc.tuple(typeArb(), payloadArb()) },
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.constant('chat.create'),
        fc.record({ chatId: freshChatId(), cwd: hostileString(), runtimeMode: modeArb(), provider: kindArb() }, { requiredKeys: ['chatId'] }),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.constant('chat.configure'),
        fc.record({ chatId: fc.constantFrom('main', 'other'), runtimeMode: modeArb(), account: accountIdArb() }, { requiredKeys: ['chatId'] }),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constant('accounts.save'), fc.record({ accounts: fc.dictionary(accountIdArb(), accountArb(), { minKeys: 1, maxKeys: 2 }) })),
    },
    // An account with variables only (no folder), then a new chat on it and a message: the path to a CLI with them.
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.constant(ACCOUNT_THEN_SEND),
        fc.record({ kind: fc.constantFrom(...KINDS), env: fc.array(variableArb(), { minLength: 1, maxLength: 3 }), chatId: freshChatId() }),
      ),
    },
  );
/** Not a request type: the property sends accounts.save, chat.create on that account and chat.send. */
const ACCOUNT_THEN_SEND = '(account, chat on it, send)';

async function send(type: string, payload: unknown): Promise<any> {
  const reply = await relay.request(`hostile-${++nextId}`, type, payload);
  replies.push({ type, reply });
  return reply;
}

beforeAll(async () => {
  mkdirSync(work);
  mkdirSync(path.join(work, 'project'));
  mkdirSync(outside);
  // A symlink inside the folder that leads out of it.
  symlinkSync(outside, path.join(work, 'escape'));
  relay = await HostileRelay.start();
  host = await startHost({
    dataDir: data.dir,
    relayUrl: relay.url,
    hostId: 'host-hostile',
    token: 'tok',
    providers,
    // What this file proves is the host's policy against whatever frames a relay sends; its frames are
    // unsigned, so the host opts out of signatures (the tampering-relay e2e covers those).
    config: { signatures: { require: false, allowUnsigned: [] } },
    policy: new HostPolicy({ home: home.dir, roots: [work], modeCeiling: 'supervised', private: [data.dir] }),
    coalesceMs: 0,
    writeDelayMs: 5,
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    link: { backoffBaseMs: 10, backoffMaxMs: 50 },
  });
  await until(() => host.link?.state === 'open' && relay.socket !== null, 'the link');
  // Two chats made as the owner would, each with a finished turn (so forks and summaries have something to continue).
  for (const chatId of ['main', 'other', 'sweep']) {
    expect(await send('chat.create', { chatId, cwd: work })).toMatchObject({ ok: true });
    expect(await send('chat.send', { chatId, text: 'hi' })).toMatchObject({ ok: true });
  }
  await until(() => ['main', 'other', 'sweep'].every((id) => host.core.session(id).info.activeTurnId === null), 'the first turns');
}, 60_000);

afterAll(async () => {
  await host?.close();
  await relay?.close();
  data.cleanup();
  home.cleanup();
});

/** Keys of `env` that the CLI would get from the client's side: set or changed relative to the host's own environment. */
function clientVariables(env: NodeJS.ProcessEnv, own: Record<string, string | undefined>): string[] {
  return Object.keys(env).filter((name) => env[name] !== own[name]);
}

const inWork = (folder: string) => {
  const rel = path.relative(realpathSync(work), realpathSync(folder));
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/** Every flag a command builder may give a supervised chat; anything else on an argv is an injection. */
const CLAUDE_FIXED = new Set([
  '-p',
  '--input-format=stream-json',
  '--output-format=stream-json',
  '--verbose',
  '--include-partial-messages',
  '--permission-prompt-tool=stdio',
  '--permission-mode=default',
  '--fork-session',
]);
const VALUE_FLAGS = /^--(model|effort|resume)=[^\s\0]+$/;

function checkStart(kind: AgentKind, context: ProviderChatContext): void {
  // The folder and the mode: the policy's, whatever was asked.
  expect(inWork(context.cwd), `${kind} started in ${context.cwd}`).toBe(true);
  expect(context.runtimeMode).toBe('supervised');
  // Only the safe variables (this policy names no more), and no config folder (it names none).
  for (const name of Object.keys(context.accountEnv ?? {})) expect(SAFE_ACCOUNT_VARIABLES).toContain(name);
  expect(context.accountHome).toBeUndefined();
  // The real command lines: refused (bad-request before anything starts), or made of known flags only.
  const built = (make: () => { args: string[]; env: NodeJS.ProcessEnv; own: Record<string, string | undefined> }) => {
    let line: ReturnType<typeof make>;
    try {
      line = make();
    } catch (error) {
      expect(error).toBeInstanceOf(ProtocolError);
      expect((error as ProtocolError).code).toBe('bad-request');
      return;
    }
    for (const name of clientVariables(line.env, line.own)) expect(SAFE_ACCOUNT_VARIABLES, `${kind} would get ${name}`).toContain(name);
    return line.args;
  };
  // The host's own: no autoupdate, and its terminal hooks kept out of a chat's CLI.
  const own = { ...process.env, DISABLE_AUTOUPDATER: '1', TETHER_HOOKS_OFF: '1' };
  switch (kind) {
    case 'claude': {
      const args = built(() => ({
        args: claudeArgs(context, context.agentSessionId, []),
        env: claudeEnv(context, { command: 'claude', args: [], env: {} }),
        own,
      }));
      for (const arg of args ?? []) expect(CLAUDE_FIXED.has(arg) || VALUE_FLAGS.test(arg), `claude argv ${JSON.stringify(arg)}`).toBe(true);
      break;
    }
    case 'codex': {
      built(() => {
        const plan = codexThreadPlan(context, context.agentSessionId, context.forkSession === true, null);
        // Supervised: Codex asks for everything and may write nowhere unasked.
        expect(plan.settings).toMatchObject({ cwd: context.cwd, approvalPolicy: 'untrusted', sandbox: 'read-only' });
        return { args: [], env: codexEnv({ command: 'codex', clientVersion: '0' }, context.accountHome, context.accountEnv), own: process.env };
      });
      break;
    }
    case 'copilot':
    case 'gemini': {
      const spec = kind === 'copilot' ? copilotSpec({ command: kind, clientVersion: '0' }) : geminiSpec({ command: kind, clientVersion: '0' });
      const args = built(() => ({
        ...spec.commandLine({
          selection: context.selection,
          runtimeMode: context.runtimeMode,
          accountHome: context.accountHome,
          accountEnv: context.accountEnv,
        }),
        own: process.env,
      }));
      for (const arg of args ?? [])
        expect(['--acp', '--stdio', '--no-auto-update'].includes(arg) || VALUE_FLAGS.test(arg), `${kind} argv ${JSON.stringify(arg)}`).toBe(true);
      break;
    }
  }
}

describe('a host behind a hostile relay (policy: one folder, supervised)', () => {
  it('answers every generated request of every type with a result or a { code, message }, and starts no CLI the policy did not allow', async () => {
    // Every type of the registry at least once, about a chat the host has (its own: chat.kill is among them) and with nothing at all.
    for (const type of REQUEST_TYPES) {
      await send(type, { chatId: 'sweep' });
      await send(type, undefined);
    }
    await fc.assert(
      fc.asyncProperty(requestArb(), async ([type, payload]) => {
        if (type === ACCOUNT_THEN_SEND) {
          const { kind, env, chatId } = payload as { kind: AgentKind; env: unknown[]; chatId: string };
          await send('accounts.save', { accounts: { evil: { kind, label: 'Evil', env } } });
          await send('chat.create', { chatId, provider: kind, account: 'evil', cwd: work });
          await send('chat.send', { chatId, text: 'hi' });
          return;
        }
        const reply = await send(type, payload);
        expect(typeof reply.ok).toBe('boolean');
        if (!reply.ok) {
          expect(CODES.has(reply.error.code), `${type}: ${JSON.stringify(reply.error)}`).toBe(true);
          expect(typeof reply.error.message).toBe('string');
          expect(reply.error.message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 600, seed: Number(process.env.HOSTILE_SEED ?? 20261201) },
    );

    // Every chat there is gets a message, so each starts a CLI if it can.
    for (const chatId of host.core.sessions.keys()) await send('chat.send', { chatId, text: 'hi' });
    await until(() => [...host.core.sessions.values()].every((s) => s.info.activeTurnId === null || s.info.status === 'needs-you'), 'turns to settle', 20_000);

    const starts = providers.flatMap((p) => p.opened.map((context) => ({ kind: p.kind, context })));
    // Not vacuous: CLIs did start, and the policy was tested where it refuses.
    expect(starts.length).toBeGreaterThan(2);
    for (const { kind, context } of starts) checkStart(kind, context);
    for (const { type, reply } of replies) {
      if (!reply.ok) {
        expect(CODES.has(reply.error.code), `${type}: ${JSON.stringify(reply.error)}`).toBe(true);
        expect(reply.error.message.length).toBeGreaterThan(0);
      } else if (type === 'accounts.save' || type === 'accounts.create') {
        // Whatever an answer shows saved is within the policy.
        for (const account of Object.values(reply.result.accounts as Record<string, { env?: { name: string }[]; home?: string }>)) {
          for (const variable of account.env ?? []) expect(SAFE_ACCOUNT_VARIABLES, `saved ${variable.name}`).toContain(variable.name);
          expect(account.home).toBeUndefined();
        }
      }
    }
    const codes = new Set(replies.filter((r) => !r.reply.ok).map((r) => r.reply.error.code));
    for (const code of ['folder-denied', 'mode-denied', 'invalid-account', 'bad-request']) expect(codes, `no ${code} seen`).toContain(code);
    // Every request type was sent.
    expect(REQUEST_TYPES.filter((type) => !replies.some((r) => r.type === type))).toEqual([]);

    // What the host keeps is within the policy too: every chat's folder and mode, every saved account.
    for (const session of host.core.sessions.values()) {
      expect(inWork(session.info.cwd)).toBe(true);
      expect(session.info.runtimeMode).toBe('supervised');
    }
    for (const [id, account] of Object.entries(host.core.accounts.snapshot().accounts)) {
      for (const variable of account.env ?? []) expect(SAFE_ACCOUNT_VARIABLES, `account ${id} keeps ${variable.name}`).toContain(variable.name);
      expect(account.home).toBeUndefined();
    }
    // And it still serves.
    expect(await send('chat.list', {})).toMatchObject({ ok: true });
  }, 120_000);
});
