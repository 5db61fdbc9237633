// Test harness for the host runtime: a scripted provider with tiny delays, a temp data folder, and a
// client that records what the host pushes and folds `chat.event`s into its own Thread, the way a
// real client does.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { Thread } from '../../src/contracts/thread.ts';
import type { ChatEvent, ChatInfo } from '../../src/contracts/index.ts';
import { HostCore } from '../../src/host/chats/core.ts';
import type { HostCoreOptions, HostEventFrame, ReplyFrame } from '../../src/host/chats/core.ts';
import { HostPolicy } from '../../src/host/policy.ts';
import type { Provider } from '../../src/host/providers/provider.ts';
import { ScriptFileSchema, ScriptProvider } from '../../src/host/providers/script.ts';
import { HOOK_MARK } from '../../src/host/terminal/hooks-file.ts';
import { until } from '../support/until.ts';

export const TEST_SCRIPT = ScriptFileSchema.parse({
  replies: [
    {
      match: 'approve',
      steps: [
        { type: 'text', text: 'I need to list the folder.' },
        {
          type: 'approval',
          toolName: 'Bash',
          input: { command: 'ls -la' },
          description: 'List files',
          canAllowAlways: true,
          allowAlways: { label: 'Always allow ls' },
          deniedText: 'Not listing, then.',
        },
        { type: 'tool', name: 'Bash', input: { command: 'ls -la' }, output: 'a.txt\nb.txt\n', deltas: 2 },
        { type: 'text', text: 'Listed.' },
        { type: 'cost', usd: 0.01 },
      ],
    },
    {
      match: 'async question',
      steps: [
        { type: 'question', async: true, questions: [{ id: 'later', question: 'Anything else?', choices: [{ label: 'No' }] }] },
        { type: 'text', text: 'Moving on.' },
      ],
    },
    {
      match: 'question',
      steps: [
        { type: 'question', questions: [{ id: 'color', header: 'Color', question: 'Which color?', choices: [{ label: 'Blue' }, { label: 'Red' }] }] },
        { type: 'text', text: 'You chose {{answer:color}}.' },
      ],
    },
    {
      match: 'visual',
      steps: [
        { type: 'visual', title: 'A chart', html: '<p>chart</p>', maxHeight: 300 },
        { type: 'text', text: 'See above.' },
      ],
    },
    {
      match: 'fail',
      steps: [
        { type: 'text', text: 'Trying.' },
        { type: 'fail', message: 'It broke.' },
      ],
    },
    {
      match: 'stream',
      steps: [
        { type: 'stream', count: 50, size: 10 },
        { type: 'cost', usd: 0.5 },
      ],
    },
    {
      match: 'edit',
      steps: [{ type: 'tool', name: 'Edit', input: { file_path: 'a.ts' }, output: 'ok', changes: [{ path: 'a.ts', kind: 'update', diff: '-a\n+b' }] }],
    },
    {
      steps: [
        { type: 'thinking', text: 'Hmm, a greeting.', deltas: 2, delayMs: 1 },
        { type: 'text', text: 'Hello there, friend', deltas: 4, delayMs: 1 },
        { type: 'cost', usd: 0.02, contextTokens: 100, contextWindow: 1000 },
      ],
    },
  ],
});

export function tempDir(prefix = 'tether-host-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function openCore(dataDir: string, options: Partial<HostCoreOptions> = {}): Promise<HostCore> {
  const core = await HostCore.open({
    dataDir,
    providers: [new ScriptProvider({ kind: 'claude', script: TEST_SCRIPT })],
    policy: new HostPolicy({ home: dataDir }),
    coalesceMs: 0,
    writeDelayMs: 5,
    ...options,
  });
  return core;
}

/** A 1×1 PNG, base64: the smallest image attachment. */
export const TINY_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** A host serving one provider, with chat `c` made (`create`: provider, cwd, mode) and a client attached: the real-CLI driver tests. */
export async function openCliChat(dataDir: string, provider: Provider, create: Record<string, unknown>): Promise<{ core: HostCore; client: TestClient }> {
  const core = await openCore(dataDir, { providers: [provider], policy: new HostPolicy({ home: dataDir }) });
  const client = new TestClient(core);
  await client.ok('chat.create', { chatId: 'c', ...create });
  await client.attach('c');
  return { core, client };
}

let nextId = 0;

export class TestClient {
  readonly id: string;
  readonly frames: HostEventFrame[] = [];
  readonly statuses = new Map<string, ChatInfo>();
  readonly threads = new Map<string, Thread>();
  readonly seqs = new Map<string, number[]>();
  private readonly core: HostCore;
  readonly release: () => void;

  constructor(core: HostCore, id = `client-${++nextId}`, allChats = false) {
    this.core = core;
    this.id = id;
    this.release = core.connect(id, (frame) => this.receive(frame), { allChats });
  }

  private receive(frame: HostEventFrame): void {
    // Clients get JSON: make sure every frame survives a round trip unchanged.
    const copy = JSON.parse(JSON.stringify(frame)) as HostEventFrame;
    this.frames.push(copy);
    if (copy.event === 'chat.status') {
      const { chatId, info } = copy.payload as { chatId: string; info: ChatInfo };
      this.statuses.set(chatId, info);
    }
    if (copy.event === 'chat.event') {
      const { chatId, event, seq } = copy.payload as { chatId: string; event: ChatEvent; seq: number };
      const list = this.seqs.get(chatId) ?? [];
      list.push(seq);
      this.seqs.set(chatId, list);
      this.threads.get(chatId)?.apply(event);
    }
  }

  async request(type: string, payload: unknown, id = `req-${++nextId}`): Promise<ReplyFrame> {
    // As over a socket: the client gets a copy, never the host's own objects.
    return JSON.parse(JSON.stringify(await this.core.serve({ id, type, payload }, this.id))) as ReplyFrame;
  }

  /** The result of a request that must succeed. */
  async ok<T = any>(type: string, payload: unknown, id?: string): Promise<T> {
    const reply = await this.request(type, payload, id);
    if (!reply.ok) throw new Error(`${type} failed: ${reply.error.code} ${reply.error.message}`);
    return reply.result as T;
  }

  /** The error code of a request that must fail. */
  async fails(type: string, payload: unknown, id?: string): Promise<string> {
    const reply = await this.request(type, payload, id);
    if (reply.ok) throw new Error(`${type} unexpectedly succeeded`);
    return reply.error.code;
  }

  /** Attaches and keeps a local thread folded from the snapshot and the events after it. */
  async attach(chatId: string, extra: Record<string, unknown> = {}): Promise<any> {
    const result = await this.ok('chat.attach', { chatId, ...extra });
    if (result.events) {
      const thread = this.threads.get(chatId);
      for (const event of result.events) thread?.apply(event);
    } else {
      this.threads.set(chatId, new Thread(result.info, result.items));
    }
    return result;
  }

  events(name: string): HostEventFrame[] {
    return this.frames.filter((f) => f.event === name);
  }
}

// The tests' one poll; its 5 s default is the host tests' own.
export { until };

/** Waits until the chat has no turn running and nothing pending. */
export async function idle(core: HostCore, chatId: string): Promise<void> {
  await until(() => {
    const info = core.session(chatId).info;
    return info.activeTurnId === null && (info.status === 'idle' || info.status === 'error');
  }, `chat ${chatId} to settle`);
}

export async function needsYou(core: HostCore, chatId: string): Promise<ChatInfo> {
  await until(() => core.session(chatId).info.status === 'needs-you', `chat ${chatId} to need someone`);
  return core.session(chatId).info;
}

export { expect };

const HOOK_CLIENT = path.resolve(import.meta.dirname, '../../src/host/terminal/hook-client.ts');

/** Runs the real hook client with `input` on stdin, as the CLI runs a hook command; answers what it printed. */
export function runHookClient(kind: 'claude' | 'codex', dataDir: string, input: unknown): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [HOOK_CLIENT, kind, dataDir, HOOK_MARK], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
    });
    child.on('exit', () => resolve(out));
    child.stdin.end(JSON.stringify(input));
  });
}
