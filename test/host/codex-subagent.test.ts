// Codex's subagents with the real `codex app-server` (0.171's collab agents) inside a HostCore, the
// model being the scripted Responses server: a spawned agent is a subagent row whose own thread's
// work is under it, `chat.subagent` pages that thread's rollout, `chat.stopSubagent` interrupts its
// turn, `chat.cancel` interrupts the turns of the agents the cancelled turn spawned, and an agent
// that outlives its turn keeps its row running until its own turn ends. Also the rollout reader's refusals (a thread id that is not a UUID, another chat's agent).
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatItem } from '../../src/contracts/index.ts';
import { findRollout, subagentRolloutItems } from '../../src/host/providers/codex/subagent-rollout.ts';
import { openCodexChat, type CodexChat } from './codex-chat.ts';
import { AGENT_GO_FILE, AGENT_GO_REPORT, SUBAGENT_REPORT, TEAM_REPLY } from './fixtures/codex/scenario.ts';
import { AGENT_TURN_LABEL } from '../../src/host/providers/codex/driver.ts';
import { until, type TestClient } from './harness.ts';

let chat: CodexChat;
let client: TestClient;

beforeAll(async () => {
  // Full access: Codex runs the agent's commands without asking (approvals are not what this file tests).
  chat = await openCodexChat('tether-codex-subagent-', 'full-access');
  client = chat.client;
}, 30_000);

afterAll(async () => {
  await chat?.close();
});

const thread = () => client.threads.get('c')!;
const subagentRow = (prompt: string) => {
  const row = thread().items.find((i) => i.kind === 'subagent' && i.prompt?.includes(prompt));
  return row?.kind === 'subagent' ? row : undefined;
};
const under = (toolUseId: string) => thread().items.filter((i) => (i.kind === 'tool' || i.kind === 'assistant') && i.parentToolUseId === toolUseId);

describe('Codex subagents with the real binary', { timeout: 90_000 }, () => {
  it("a spawned agent is a subagent row with its own thread's work under it, and chat.subagent pages that thread's rollout", async () => {
    const { turnId } = await client.ok<{ turnId: string }>('chat.send', { chatId: 'c', text: 'delegate the listing' });
    await until(
      () => {
        const turn = thread().get(turnId);
        return turn?.kind === 'turn' && turn.state !== 'running';
      },
      'the delegating turn',
      60_000,
    );
    expect(thread().get(turnId)).toMatchObject({ state: 'done' });
    const row = subagentRow('list the files');
    if (!row) throw new Error('no subagent row');
    expect(row).toMatchObject({
      description: 'SUBAGENT-PROMPT: list the files',
      status: 'done',
      result: SUBAGENT_REPORT,
      background: true,
      itemsTruncated: false,
      usage: { toolUses: 1 },
      native: { threadId: expect.stringMatching(/^[0-9a-f-]{36}$/) },
    });
    expect(row.native?.threadId).not.toBe(thread().info.agentSessionId);
    // Its command and report are in the thread under the row; the chat's own reply is not.
    expect(under(row.toolUseId).map((i) => i.kind)).toEqual(['tool', 'assistant']);
    expect(under(row.toolUseId)[0]).toMatchObject({ name: 'Bash', input: { command: 'echo sub-echo' }, state: 'done' });
    expect(thread().items.some((i) => i.kind === 'assistant' && !i.parentToolUseId && i.text === 'The agent reported back.')).toBe(true);
    expect(thread().items.some((i) => i.kind === 'tool' && i.name === 'agent:spawnAgent')).toBe(false);

    const page = await client.ok<{ items: ChatItem[]; history: { start?: number; cursor: string | null }; source: string; live: boolean }>('chat.subagent', {
      chatId: 'c',
      toolUseId: row.toolUseId,
    });
    expect(page).toMatchObject({ source: 'codex-thread', live: false, history: { cursor: null }, context: { provider: 'codex', chatId: 'c' } });
    expect(page.history.start).toBeUndefined();
    expect(page.items.map((i) => i.kind)).toEqual(['user', 'tool', 'assistant']);
    expect(page.items[0]).toMatchObject({ text: 'SUBAGENT-PROMPT: list the files' });
    expect(page.items[1]).toMatchObject({
      name: 'Bash',
      input: { command: 'echo sub-echo' },
      output: 'sub-echo\n',
      state: 'done',
      parentToolUseId: row.toolUseId,
    });
    expect(page.items[2]).toMatchObject({ text: SUBAGENT_REPORT, parentToolUseId: row.toolUseId });

    const newest = await client.ok<typeof page>('chat.subagent', { chatId: 'c', toolUseId: row.toolUseId, limit: 1 });
    expect(newest.items.map((i) => i.kind)).toEqual(['assistant']);
    const older = await client.ok<typeof page>('chat.subagent', { chatId: 'c', toolUseId: row.toolUseId, limit: 2, cursor: newest.history.cursor });
    expect(older.items.map((i) => i.kind)).toEqual(['user', 'tool']);
    expect(older.history.cursor).toBeNull();

    expect(await client.fails('chat.subagent', { chatId: 'c', toolUseId: 'call_none' })).toBe('subagent-not-found');
    expect(await client.fails('chat.subagent', { chatId: 'c', toolUseId: row.toolUseId, cursor: 'forged' })).toBe('history-expired');
    // It finished: nothing to stop.
    expect(await client.fails('chat.stopSubagent', { chatId: 'c', toolUseId: row.toolUseId })).toBe('subagent-not-found');
  });

  it("chat.stopSubagent interrupts the agent's own turn: its row ends failed, its command never finishes, the turn goes on", async () => {
    const { turnId } = await client.ok<{ turnId: string }>('chat.send', { chatId: 'c', text: 'delegate a long job' });
    await until(
      () => {
        const row = subagentRow('wait long');
        return !!row && under(row.toolUseId).some((i) => i.kind === 'tool' && i.state === 'running');
      },
      "the agent's sleep running",
      60_000,
    );
    const row = subagentRow('wait long')!;
    expect(row.status).toBe('running');

    await client.ok('chat.stopSubagent', { chatId: 'c', toolUseId: row.toolUseId });
    await until(() => subagentRow('wait long')?.status !== 'running', 'the agent stopped', 30_000);
    expect(subagentRow('wait long')).toMatchObject({ status: 'failed', summary: 'Stopped' });
    const sleep = under(row.toolUseId).find((i) => i.kind === 'tool');
    expect(sleep?.kind === 'tool' ? sleep.state : null).toBe('error');
    expect(await client.fails('chat.stopSubagent', { chatId: 'c', toolUseId: row.toolUseId })).toBe('subagent-not-found');

    // The parent's wait runs out on its own (Codex takes an interrupted agent for no final status) and the turn ends done.
    await until(
      () => {
        const turn = thread().get(turnId);
        return turn?.kind === 'turn' && turn.state !== 'running';
      },
      'the delegating turn',
      60_000,
    );
    expect(thread().get(turnId)).toMatchObject({ state: 'done' });
    // Its rollout holds what it did before it was stopped.
    const page = await client.ok<{ items: ChatItem[] }>('chat.subagent', { chatId: 'c', toolUseId: row.toolUseId });
    expect(page.items.map((i) => i.kind)).toEqual(['user', 'tool']);
    expect(page.items[1]).toMatchObject({ input: { command: 'sleep 120' }, state: 'running' });
  });

  it("chat.cancel interrupts the agents the turn set working too: Codex records the agent's turn aborted, its command never finishes", async () => {
    const { turnId } = await client.ok<{ turnId: string }>('chat.send', { chatId: 'c', text: 'delegate a long job' });
    const running = () =>
      thread().items.find(
        (i) =>
          i.kind === 'subagent' && i.turnId === turnId && i.status === 'running' && under(i.toolUseId).some((t) => t.kind === 'tool' && t.state === 'running'),
      );
    await until(() => !!running(), "the agent's sleep running", 60_000);
    const row = running()!;
    if (row.kind !== 'subagent') throw new Error('not a subagent row');
    const agentThread = row.native!.threadId!;

    await client.ok('chat.cancel', { chatId: 'c' });
    await until(
      () => {
        const turn = thread().get(turnId);
        return turn?.kind === 'turn' && turn.state !== 'running';
      },
      'the cancelled turn',
      30_000,
    );
    expect(thread().get(turnId)).toMatchObject({ state: 'aborted' });
    expect(thread().items.find((i) => i.id === row.id)).toMatchObject({ status: 'failed' });

    // Codex's own record of the agent's thread: its turn ended aborted (interrupted), not still sleeping.
    const sessions = path.join(chat.home, 'sessions');
    let rollout = '(no rollout yet)';
    const aborted = async () => {
      const file = await findRollout(sessions, agentThread);
      if (!file) return null;
      const text = await readFile(file, 'utf8');
      rollout = text.slice(-1500);
      return (
        text
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line))
          .find((entry) => entry.type === 'event_msg' && entry.payload?.type === 'turn_aborted') ?? null
      );
    };
    const record: { payload: { reason?: string } } = await until(aborted, "the agent's rollout to record an aborted turn", {
      ms: 30_000,
      every: 50,
      detail: () => rollout,
    });
    expect(record.payload.reason).toBe('interrupted');
  });

  it('a message sent right after chat.cancel is a turn of its own: what the cancelled turn still says, its interrupted end above all, does not end it', async () => {
    const { turnId } = await client.ok<{ turnId: string }>('chat.send', { chatId: 'c', text: 'sleep a while' });
    await until(() => thread().items.some((i) => i.kind === 'tool' && i.turnId === turnId && i.state === 'running'), 'the sleep running', 60_000);
    await client.ok('chat.cancel', { chatId: 'c' });
    // At once: Codex has not completed the interrupted turn yet.
    const next = await client.ok<{ turnId: string }>('chat.send', { chatId: 'c', text: 'hello there' });
    await until(
      () => {
        const turn = thread().get(next.turnId);
        return turn?.kind === 'turn' && turn.state !== 'running';
      },
      'the next turn',
      60_000,
    );
    expect(thread().get(turnId)).toMatchObject({ state: 'aborted' });
    expect(thread().get(next.turnId)).toMatchObject({ state: 'done' });
    expect(thread().items.some((i) => i.kind === 'assistant' && i.turnId === next.turnId && i.text === 'Hello from the scripted model.')).toBe(true);
  });

  // What Codex 0.171 sends for an agent that outlives its turn was learned from the pinned CLI against
  // the scripted model server: test/host/fixtures/codex/subagent-outlived.jsonl (record.ts). The
  // parent's `turn/completed` comes first; the agent's thread then goes on with `item/started` (its
  // command), `item/commandExecution/outputDelta`, `item/completed`, its reply's deltas and item, and
  // its own `turn/completed`, all while the chat's thread runs no turn.
  it('an agent that outlives the turn that spawned it: its work after the turn is under its row, live, no turn opened for it, and it ends as Codex reports it', async () => {
    const { turnId } = await client.ok<{ turnId: string }>('chat.send', { chatId: 'c', text: 'delegate and leave' });
    await until(
      () => {
        const turn = thread().get(turnId);
        return turn?.kind === 'turn' && turn.state !== 'running';
      },
      'the turn that left its agent working',
      60_000,
    );
    expect(thread().get(turnId)).toMatchObject({ state: 'done' });
    const row = subagentRow('wait for the go');
    if (!row) throw new Error('no subagent row');
    // Still at work: its command waits for a file nobody has written yet.
    expect(row).toMatchObject({ status: 'running', finishedAt: null, turnId });
    const turns = () => thread().items.filter((i) => i.kind === 'turn').length;
    const turnsBefore = turns();

    // The command it runs after the turn ended is in the chat under its row (in the turn it outlived), running.
    const waiting = () => under(row.toolUseId).find((i) => i.kind === 'tool' && i.state === 'running' && JSON.stringify(i.input).includes(AGENT_GO_FILE));
    await until(() => !!waiting(), "the agent's command in the chat", 30_000);
    expect(waiting()).toMatchObject({ kind: 'tool', name: 'Bash', turnId, parentToolUseId: row.toolUseId, output: null });
    expect(subagentRow('wait for the go')).toMatchObject({ status: 'running', lastTool: 'Bash', usage: { toolUses: 1 } });
    // No turn was opened for it: the chat is idle, and the clients' status says so.
    expect(thread().info).toMatchObject({ status: 'idle', activeTurnId: null });
    expect(client.statuses.get('c')).toMatchObject({ status: 'idle', activeTurnId: null });
    expect(turns()).toBe(turnsBefore);
    const page = await client.ok<{ live: boolean }>('chat.subagent', { chatId: 'c', toolUseId: row.toolUseId });
    expect(page.live).toBe(true);

    // A turn of the person's own meanwhile neither takes the agent's work nor settles its row when it ends.
    const other = await client.ok<{ turnId: string }>('chat.send', { chatId: 'c', text: 'hello there' });
    await until(
      () => {
        const turn = thread().get(other.turnId);
        return turn?.kind === 'turn' && turn.state !== 'running';
      },
      "the person's turn",
      60_000,
    );
    expect(thread().get(other.turnId)).toMatchObject({ state: 'done' });
    expect(subagentRow('wait for the go')).toMatchObject({ status: 'running' });
    expect(waiting()).toMatchObject({ state: 'running', turnId });

    writeFileSync(path.join(chat.work, AGENT_GO_FILE), '');
    await until(() => subagentRow('wait for the go')?.status !== 'running', "the agent's own end", 30_000);
    expect(subagentRow('wait for the go')).toMatchObject({ status: 'done', result: AGENT_GO_REPORT, usage: { toolUses: 1 } });
    expect(subagentRow('wait for the go')?.finishedAt).toEqual(expect.any(Number));
    // Its command finished with its output, and its report is under its row, not the chat's own reply.
    const work = under(row.toolUseId);
    expect(work.map((i) => i.kind)).toEqual(['tool', 'assistant']);
    expect(work[0]).toMatchObject({ state: 'done', output: 'went\n' });
    expect(work[1]).toMatchObject({ text: AGENT_GO_REPORT, streaming: false, turnId, parentToolUseId: row.toolUseId });
    // The turns stay as they ended, and none more.
    expect(thread().get(turnId)).toMatchObject({ state: 'done' });
    expect(turns()).toBe(turnsBefore + 1);
    expect(thread().info).toMatchObject({ status: 'idle', activeTurnId: null });
  });

  it("reads no rollout for a thread id that is not a UUID, nor one that is not a subagent of the chat's thread", async () => {
    const sessions = path.join(chat.home, 'sessions');
    for (const id of ['../../etc/passwd', '*', '', 'a/b', '01a235bf-a210-72a3-bd18-788da97bed67/../x']) {
      expect(await findRollout(sessions, id)).toBeNull();
    }
    const row = subagentRow('list the files')!;
    const file = await findRollout(sessions, row.native!.threadId!);
    expect(file).toMatch(/\/sessions\/\d{4}\/\d{2}\/\d{2}\/rollout-.*\.jsonl$/);
    const text = await readFile(file!, 'utf8');
    const chatThread = thread().info.agentSessionId!;
    expect(subagentRolloutItems(text, chatThread, row.native!.threadId!, row.toolUseId)).toHaveLength(3);
    // Another chat's thread as the parent, or another thread's rollout: not read.
    expect(subagentRolloutItems(text, '01a235bf-0000-7000-8000-000000000000', row.native!.threadId!, row.toolUseId)).toBeNull();
    expect(subagentRolloutItems(text, chatThread, chatThread, row.toolUseId)).toBeNull();
    // The chat's own rollout is no subagent's.
    const own = await findRollout(sessions, chatThread);
    expect(subagentRolloutItems(await readFile(own!, 'utf8'), chatThread, chatThread, row.toolUseId)).toBeNull();
    // A file named like a rollout outside the date folders is never found.
    writeFileSync(path.join(sessions, `rollout-x-${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}.jsonl`), '{}\n');
    expect(await findRollout(sessions, `${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}`)).toBeNull();
  });
});

// With `multi_agent_v2` and `wake_on_agent_messages` (Codex features the host does not enable, but a
// person's config.toml may), Codex wakes the parent's thread with a turn of its own when an agent it
// spawned finishes while the thread is idle; with either alone, or with neither (what the host runs),
// it does not (learned from the pinned 0.171 against the scripted model server). That turn is the
// chat's too: an agent turn the app follows, running, then done.
describe('a turn Codex starts by itself (multi_agent_v2, wake_on_agent_messages)', { timeout: 90_000 }, () => {
  let team: CodexChat;
  beforeAll(async () => {
    team = await openCodexChat('tether-codex-team-', 'full-access', ['--enable', 'multi_agent_v2', '--enable', 'wake_on_agent_messages']);
  }, 30_000);
  afterAll(async () => {
    await team?.close();
  });

  it('is shown as an agent turn: the chat runs, its reply is in it, then the chat is idle', async () => {
    const teamThread = () => team.client.threads.get('c')!;
    const { turnId } = await team.client.ok<{ turnId: string }>('chat.send', { chatId: 'c', text: 'delegate to a team' });
    const woken = () => teamThread().items.find((i) => i.kind === 'turn' && i.id !== turnId);
    await until(
      () => {
        const first = teamThread().get(turnId);
        return first?.kind === 'turn' && first.state !== 'running';
      },
      'the turn that handed the work on',
      60_000,
    );
    // Its agent waits for the go file: the chat is idle until it ends.
    expect(woken()).toBeUndefined();
    expect(teamThread().info).toMatchObject({ status: 'idle', activeTurnId: null });
    writeFileSync(path.join(team.work, AGENT_GO_FILE), '');
    await until(() => woken()?.kind === 'turn' && (woken() as { state: string }).state !== 'running', 'the turn Codex woke the chat with', 60_000);
    expect(teamThread().get(turnId)).toMatchObject({ state: 'done' });
    const turn = woken()!;
    expect(turn).toMatchObject({ kind: 'turn', origin: 'agent', label: AGENT_TURN_LABEL, state: 'done', endedAt: expect.any(Number) });
    // Nobody typed it: no user message in it, and its reply is the model's answer to the wake.
    expect(teamThread().items.some((i) => i.kind === 'user' && i.turnId === turn.id)).toBe(false);
    expect(teamThread().items.some((i) => i.kind === 'assistant' && i.turnId === turn.id && i.text === TEAM_REPLY)).toBe(true);
    // The app saw it run: a chat.status said running with that turn, and the last says idle.
    const statuses = team.client.frames
      .filter((f) => f.event === 'chat.status')
      .map((f) => (f.payload as { info: { status: string; activeTurnId: string | null } }).info);
    expect(statuses.some((info) => info.status === 'running' && info.activeTurnId === turn.id)).toBe(true);
    expect(teamThread().info).toMatchObject({ status: 'idle', activeTurnId: null });
    expect(team.client.statuses.get('c')).toMatchObject({ status: 'idle', activeTurnId: null });
  });
});
