// CliProcess: one agent CLI running as a child of the host, the way every driver runs one.
//
// The child leads its own process group (`detached: true`), so ending it also ends whatever it
// started (shells, language servers, tool runs) and a Ctrl-C in the host's terminal does not reach
// it before the host has written its threads. Stdout is read as lines (no length limit, a trailing
// `\r` dropped); stderr is kept as a bounded tail for diagnostics, never parsed.
//
// Ending is polite first: stdin is closed (every CLI we drive exits cleanly on EOF), then after
// `stdinGraceMs` the group gets SIGTERM, then after `termGraceMs` SIGKILL. Whatever the leader left
// in its group when it exited gets the same SIGTERM → SIGKILL treatment.
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface CliProcessOptions {
  command: string;
  args: readonly string[];
  cwd: string;
  /** The whole environment of the child (not merged with the host's). */
  env?: NodeJS.ProcessEnv;
  /** One stdout line, without its line ending. */
  onLine(line: string): void;
  /** The leader exited (on its own or by `end()`); called once. */
  onExit?(exit: CliExit): void;
  /** How much of stderr's tail is kept. Default 64 KiB. */
  stderrLimit?: number;
  /** Wait after closing stdin before SIGTERM. Default 3 000. */
  stdinGraceMs?: number;
  /** Wait after SIGTERM before SIGKILL. Default 2 000. */
  termGraceMs?: number;
}

export interface CliExit {
  code: number | null;
  /** The signal that ended the leader, if one did. */
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all (e.g. ENOENT). */
  error?: Error;
}

export class CliProcess {
  /** Resolves once the leader exited (or failed to start); never rejects. */
  readonly exited: Promise<CliExit>;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly options: CliProcessOptions;
  private stderrTail = '';
  private exit: CliExit | null = null;
  private ending: Promise<CliExit> | null = null;

  constructor(options: CliProcessOptions) {
    this.options = options;
    this.child = spawn(options.command, [...options.args], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let settle!: (exit: CliExit) => void;
    this.exited = new Promise((resolve) => {
      settle = resolve;
    });
    const done = (exit: CliExit): void => {
      if (this.exit) return;
      this.exit = exit;
      options.onExit?.(exit);
      settle(exit);
    };
    this.child.once('exit', (code, signal) => done({ code, signal }));
    this.child.once('error', (error) => {
      // A spawn failure never gets an `exit`; a kill failure on a live child is not an end.
      if (this.child.pid === undefined || this.child.exitCode !== null) done({ code: null, signal: null, error });
    });
    // A CLI that exits while we write gives EPIPE here; its exit is what matters, reported above.
    this.child.stdin.on('error', () => undefined);
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    const lines = createInterface({ input: this.child.stdout, crlfDelay: Infinity });
    lines.on('line', (line) => options.onLine(line));
    const limit = options.stderrLimit ?? 64 * 1024;
    this.child.stderr.on('data', (chunk: string) => {
      const next = this.stderrTail + chunk;
      this.stderrTail = next.length > limit ? next.slice(next.length - limit) : next;
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The leader has started and not exited. */
  get alive(): boolean {
    return this.exit === null && this.child.pid !== undefined;
  }

  /** The tail of what the CLI wrote to stderr. */
  get stderr(): string {
    return this.stderrTail;
  }

  /** Writes one line to stdin (a newline is added). False when stdin is already closed. */
  writeLine(line: string): boolean {
    const stdin = this.child.stdin;
    if (!this.alive || stdin.destroyed || stdin.writableEnded) return false;
    stdin.write(`${line}\n`);
    return true;
  }

  /** Closes stdin, then signals the group as needed; resolves with how the leader ended. Idempotent. */
  end(): Promise<CliExit> {
    this.ending ??= this.escalate();
    return this.ending;
  }

  private async escalate(): Promise<CliExit> {
    const stdinGraceMs = this.options.stdinGraceMs ?? 3_000;
    const termGraceMs = this.options.termGraceMs ?? 2_000;
    if (this.alive) {
      this.child.stdin.end();
      if (!(await this.exitWithin(stdinGraceMs))) {
        this.signalGroup('SIGTERM');
        if (!(await this.exitWithin(termGraceMs))) {
          this.signalGroup('SIGKILL');
        }
      }
    }
    const exit = await this.exited;
    this.sweepGroup(termGraceMs);
    return exit;
  }

  /** Whether the leader exits within `ms`. */
  private exitWithin(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      void this.exited.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Signals the whole group; false when no process of it is left. */
  private signalGroup(signal: NodeJS.Signals): boolean {
    const pid = this.child.pid;
    if (pid === undefined) return false;
    try {
      process.kill(-pid, signal);
      return true;
    } catch {
      return false; // ESRCH: the group is gone
    }
  }

  /**
   * What the leader left running in its group is ended too: SIGTERM now, SIGKILL after the grace.
   * The group id cannot be reused while any member lives, so the late SIGKILL reaches only them.
   */
  private sweepGroup(termGraceMs: number): void {
    if (!this.signalGroup('SIGTERM')) return;
    setTimeout(() => this.signalGroup('SIGKILL'), termGraceMs).unref();
  }
}
