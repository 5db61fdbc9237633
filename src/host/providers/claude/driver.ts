// The Claude Code driver: one `claude -p` process per chat, kept between turns (stream-json in and
// out, permission prompts over the control channel). It moves lines: what they mean is the mapper's.
//
// A turn is one user line in and one `result` out, so the n-th result ends the n-th line's turn. An
// interrupt is a control request; the runtime has already settled the turn, so whatever the CLI still
// says about it, up to and including its `result`, goes nowhere — counted, not timed, so a result
// already on its way when the interrupt left cannot end the next turn. When the process exits mid-turn the turn fails with its
// stderr tail; the next turn starts a new process that resumes the conversation by its session id.
import { HOOKS_OFF_VARIABLE } from '../../terminal/hooks-file.ts';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import type { ProviderChatContext, ProviderEmit, ProviderOutput, ProviderSession, TurnInput } from '../provider.ts';
import { CliProcess } from '../cli-process.ts';
import { admitChoice, admitModelSlug, admitSessionId, flagValue, UUID_SESSION_ID } from '../cli-values.ts';
import { CLAUDE_MODELS } from './catalog.ts';
import { ClaudeStreamMapper, interruptLine, PERMISSION_MODES, stopTaskLine, userLine, type ImageInput } from './mapper.ts';

export interface ClaudeLaunch {
  /** The `claude` executable. */
  command: string;
  /** Added after the flags the driver sets. */
  args: readonly string[];
  /** Merged over the host's environment (and under the account's). */
  env: Readonly<Record<string, string>>;
}

/**
 * The command line of one chat's process: the flags the driver sets, then the config's own `extra`.
 * Every value that came from a client is checked here (cli-values.ts) and given as `--flag=value`:
 * `--resume` takes an optional value, so a separate argument starting with `-` would be read as a
 * flag of its own (`--settings=…`, `--dangerously-skip-permissions`). Throws `bad-request` naming
 * the field when a value does not fit; nothing is started then.
 */
export function claudeArgs(context: ProviderChatContext, sessionId: string | null, extra: readonly string[]): string[] {
  const { model, options } = context.selection;
  const effort = options.effort;
  const efforts = effortChoices(model);
  return [
    '-p',
    '--input-format=stream-json',
    '--output-format=stream-json',
    '--verbose',
    '--include-partial-messages',
    '--permission-prompt-tool=stdio',
    flagValue('--permission-mode', PERMISSION_MODES[context.runtimeMode]),
    flagValue('--model', admitModelSlug('selection.model', model)),
    ...(effort !== undefined ? [flagValue('--effort', admitChoice('selection.options.effort', effort, efforts))] : []),
    ...(sessionId !== null ? [flagValue('--resume', admitSessionId('resume', sessionId, CLAUDE_SESSION_IDS))] : []),
    ...(sessionId !== null && context.forkSession ? ['--fork-session'] : []),
    ...extra,
  ];
}

/** Claude Code's session ids (`--resume` would take a session title too; this host never passes one). */
export const CLAUDE_SESSION_IDS = UUID_SESSION_ID;

/** The effort levels the catalog offers for `model` (none: the model takes no `--effort`). */
function effortChoices(model: string): string[] {
  const entry = CLAUDE_MODELS.models.find((m) => m.slug === model);
  const option = entry ? CLAUDE_MODELS.profiles[entry.profile]?.options.find((o) => o.id === 'effort') : undefined;
  return option?.type === 'select' ? option.choices.map((c) => c.id) : [];
}

/** The child's environment: the host's, the configured variables, then the account (its folder is `CLAUDE_CONFIG_DIR`). */
export function claudeEnv(context: Pick<ProviderChatContext, 'accountHome' | 'accountEnv'>, launch: ClaudeLaunch): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DISABLE_AUTOUPDATER: '1', ...launch.env, ...context.accountEnv };
  // A chat's CLI reports through its own protocol: the host's terminal hooks (in the same config folder) stay out of it.
  env[HOOKS_OFF_VARIABLE] = '1';
  if (context.accountHome) env.CLAUDE_CONFIG_DIR = context.accountHome;
  if (env.CLAUDE_CONFIG_DIR) env.CLAUDE_CONFIG_DIR = expandHome(env.CLAUDE_CONFIG_DIR);
  return env;
}

/** What Claude Code takes as "fold the conversation now" (it answers with `compact_boundary`). */
const COMPACT_COMMAND = '/compact';

export class ClaudeSession implements ProviderSession {
  private readonly context: ProviderChatContext;
  private readonly launch: ClaudeLaunch;
  private process: CliProcess | null = null;
  private mapper = new ClaudeStreamMapper();
  /** The session to resume when a process has to be started again. */
  private sessionId: string | null;
  private fork: boolean;
  /** Where the running turn's outputs go; null between turns. */
  private emit: ProviderEmit | null = null;
  /** User lines this process got, and results it gave: the turn it speaks about is `ended + 1`. */
  private sent = 0;
  private ended = 0;
  /** Which user line the running turn is (outputs about earlier lines go nowhere). */
  private live = 0;
  private interrupts = 0;

  constructor(context: ProviderChatContext, launch: ClaudeLaunch) {
    this.context = context;
    this.launch = launch;
    this.sessionId = context.agentSessionId;
    this.fork = context.forkSession === true;
  }

  get running(): boolean {
    return this.process?.alive ?? false;
  }

  startTurn(input: TurnInput, emit: ProviderEmit): void {
    this.emit = emit;
    void this.send(input, emit);
  }

  /** Claude Code compacts on its own `/compact` command, sent as a user line; its `compact_boundary` is the marker. */
  compact(_turnId: string, emit: ProviderEmit): void {
    this.emit = emit;
    queueMicrotask(() => this.write(JSON.stringify(userLine(COMPACT_COMMAND)), emit));
  }

  interrupt(): void {
    if (!this.emit) return;
    this.emit = null;
    const process = this.process;
    if (!process?.alive) return;
    for (const reply of this.mapper.cancelAll()) process.writeLine(JSON.stringify(reply));
    this.interrupts += 1;
    process.writeLine(JSON.stringify(interruptLine(`interrupt-${this.interrupts}`)));
  }

  /** Claude Code stops a background task on its `stop_task` control request. */
  stopTask(taskId: string): boolean {
    const process = this.process;
    if (!process?.alive) return false;
    this.interrupts += 1;
    return process.writeLine(JSON.stringify(stopTaskLine(`stop-task-${this.interrupts}`, taskId)));
  }

  /** A subagent is one of Claude Code's tasks too (`local_agent`): stopped by the task id it gave it; null when it gave none. */
  stopSubagent(toolUseId: string): boolean | null {
    const taskId = this.mapper.agentTask(toolUseId);
    return taskId === null ? null : this.stopTask(taskId);
  }

  answerApproval(requestId: string, decision: 'allow' | 'allow-always' | 'deny', message?: string): void {
    this.reply(this.mapper.approvalReply(requestId, decision, message));
  }

  answerQuestion(requestId: string, answers: Record<string, string> | null): void {
    this.reply(this.mapper.questionReply(requestId, answers));
  }

  async kill(): Promise<void> {
    this.emit = null;
    const process = this.process;
    this.process = null;
    await process?.end();
  }

  private async send(input: TurnInput, emit: ProviderEmit): Promise<void> {
    let line: string;
    try {
      const inline = await images(input);
      const text = messageText(input, new Set(inline.map((image) => image.path)));
      line = JSON.stringify(
        userLine(
          text,
          inline.map(({ mime, data }) => ({ mime, data })),
        ),
      );
    } catch (error) {
      this.endTurn(emit, { type: 'turn-end', state: 'error', message: `An attachment could not be read: ${describe(error)}` });
      return;
    }
    this.write(line, emit);
  }

  /** Sends one user line as the running turn (a process is started, resuming the session, if none runs). */
  private write(line: string, emit: ProviderEmit): void {
    if (this.emit !== emit) return; // interrupted meanwhile
    let process: CliProcess;
    try {
      process = this.process?.alive ? this.process : this.start();
    } catch (error) {
      // A value the command line refused (cli-values.ts): no process was started.
      this.endTurn(emit, { type: 'turn-end', state: 'error', message: `Claude Code was not started: ${describe(error)}` });
      return;
    }
    if (!process.writeLine(line)) {
      this.endTurn(emit, { type: 'turn-end', state: 'error', message: this.exitMessage(process) });
      return;
    }
    this.sent += 1;
    this.live = this.sent;
  }

  private start(): CliProcess {
    const context = this.context;
    // First, as it may refuse a value: nothing below runs then.
    const args = claudeArgs({ ...context, forkSession: this.fork }, this.sessionId, this.launch.args);
    // A new process counts its cost and its turns from zero, and runs nothing in the background yet.
    this.mapper = new ClaudeStreamMapper();
    context.side?.({ type: 'background', tasks: [] });
    this.sent = 0;
    this.ended = 0;
    const process: CliProcess = new CliProcess({
      command: this.launch.command,
      args,
      cwd: context.cwd,
      env: claudeEnv(context, this.launch),
      onLine: (line) => {
        if (this.process === process) this.onLine(process, line);
      },
      onExit: () => {
        if (this.process !== process) return;
        // Its background commands ended with it.
        this.context.side?.({ type: 'background', tasks: [] });
        const emit = this.emit;
        if (emit) this.endTurn(emit, { type: 'turn-end', state: 'error', message: this.exitMessage(process) });
      },
    });
    this.process = process;
    return process;
  }

  private onLine(process: CliProcess, line: string): void {
    const mapped = this.mapper.map(line);
    if (mapped.reply) process.writeLine(JSON.stringify(mapped.reply));
    for (const output of mapped.outputs) {
      // About the chat, not the turn: it may come between turns (a background command ending).
      if (output.type === 'background' || output.type === 'limits') {
        this.context.side?.(output);
        continue;
      }
      if (output.type === 'session') {
        this.sessionId = output.agentSessionId;
        // A fork happens once; after it the new session is simply resumed.
        this.fork = false;
      }
      const turn = this.ended + 1;
      if (output.type === 'turn-end') this.ended += 1;
      const emit = this.emit;
      if (!emit || turn !== this.live) continue;
      if (output.type === 'turn-end') this.endTurn(emit, output);
      else emit(output);
    }
  }

  private endTurn(emit: ProviderEmit, output: ProviderOutput): void {
    if (this.emit === emit) this.emit = null;
    emit(output);
  }

  private reply(reply: Record<string, unknown> | null): void {
    if (reply) this.process?.writeLine(JSON.stringify(reply));
  }

  private exitMessage(process: CliProcess): string {
    const tail = process.stderr.trim().split('\n').slice(-5).join('\n');
    return `Claude Code stopped${tail ? `: ${tail}` : ' without saying why'}`;
  }
}

/**
 * Mentions and files that are not inline images ride along as `@path` words, the way Claude Code's
 * own prompt takes them (a path with whitespace quoted, as the CLI reads `@"…"`). What the CLI then
 * reads is `claudeMentionedFiles` of this text, which the host checked before the turn.
 */
export function messageText(input: Pick<TurnInput, 'text' | 'attachments' | 'mentions'>, inline: ReadonlySet<string>): string {
  const files = input.attachments.filter((a) => !inline.has(a.path)).map((a) => (/\s/.test(a.path) ? `@"${a.path}"` : `@${a.path}`));
  const mentions = (input.mentions ?? []).map((m) => (m.startsWith('@') ? m : `@${m}`));
  const extra = [...mentions, ...files];
  return extra.length ? `${input.text}\n\n${extra.join(' ')}` : input.text;
}

/** Image attachments as the CLI takes them (base64 content blocks): the bytes the runtime read, else read here. */
async function images(input: TurnInput): Promise<Array<ImageInput & { path: string }>> {
  if (input.images) return input.images.map((image) => ({ mime: image.mime, data: image.data, path: image.path }));
  const pictures = input.attachments.filter((a) => a.mime.startsWith('image/'));
  return Promise.all(pictures.map(async (a) => ({ mime: a.mime, data: (await readFile(a.path)).toString('base64'), path: a.path })));
}

function expandHome(folder: string): string {
  if (folder === '~') return homedir();
  if (folder.startsWith('~/')) return path.join(homedir(), folder.slice(2));
  return folder;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
