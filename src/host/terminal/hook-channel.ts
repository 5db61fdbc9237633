// The host's end of the hook client's socket: a unix socket in the host's data folder, for the
// person's own processes only (the socket and its secret are 0600, the folder the person's). A
// connection carries one line, `{ secret, cli, event }`, and gets one line back, `{ output }` (or
// `{ error }`), when the host has an answer: at once for most events, when someone decided for a
// permission. A wrong secret, a line too long, anything that is not that shape is refused with a
// clear error and the connection closed; nothing of it reaches the sessions.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { z } from 'zod';

const LINE_MAX_BYTES = 1 << 20;

export function hookSocketPath(dataDir: string): string {
  return path.join(dataDir, 'hooks.sock');
}

export function hookSecretPath(dataDir: string): string {
  return path.join(dataDir, 'hooks.secret');
}

const HookLineSchema = z.object({
  secret: z.string().min(1).max(256),
  cli: z.enum(['claude', 'codex']),
  event: z.record(z.string(), z.unknown()),
  /** The CLI's process as the hook client found it (its liveness is checked by the host; nothing is sent to it). */
  pid: z
    .int()
    .min(2)
    .max(1 << 22)
    .optional(),
});
export type HookLine = z.output<typeof HookLineSchema>;

/** How one event is answered: `output` goes to the CLI as the hook's stdout; null says nothing. */
export interface HookCall {
  cli: HookLine['cli'];
  pid?: number;
  event: Record<string, unknown>;
  answer(output: object | null): void;
  /** Called when the hook went away before an answer (the CLI killed it, or ended). */
  onGone(listener: () => void): void;
}

/** The secret the hook client shows: made once, kept 0600 beside the socket. */
function ensureSecret(dataDir: string): Buffer {
  const file = hookSecretPath(dataDir);
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 });
  chmodSync(file, 0o600);
  return Buffer.from(readFileSync(file, 'utf8').trim());
}

export class HookChannel {
  private readonly server: Server;
  private readonly secret: Buffer;
  private readonly file: string;
  private readonly sockets = new Set<Socket>();

  private constructor(dataDir: string, handle: (call: HookCall) => void, warn: (message: string) => void) {
    this.file = hookSocketPath(dataDir);
    this.secret = ensureSecret(dataDir);
    this.server = createServer((socket) => this.accept(socket, handle, warn));
  }

  static async open(dataDir: string, handle: (call: HookCall) => void, warn: (message: string) => void): Promise<HookChannel> {
    const channel = new HookChannel(dataDir, handle, warn);
    // A socket file left by a host that died is in the way; a live host owns its data folder alone.
    rmSync(channel.file, { force: true });
    await new Promise<void>((resolve, reject) => {
      channel.server.once('error', reject);
      channel.server.listen(channel.file, () => resolve());
    });
    chmodSync(channel.file, 0o600);
    return channel;
  }

  private accept(socket: Socket, handle: (call: HookCall) => void, warn: (message: string) => void): void {
    this.sockets.add(socket);
    let buffered = '';
    let taken = false;
    let answered = false;
    const gone: (() => void)[] = [];
    const refuse = (message: string): void => {
      warn(`hook refused: ${message}`);
      socket.end(`${JSON.stringify({ error: { code: 'bad-request', message } })}\n`);
      taken = true;
    };
    socket.on('close', () => {
      this.sockets.delete(socket);
      if (taken && !answered) for (const listener of gone) listener();
    });
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      if (taken) return;
      buffered += chunk.toString('utf8');
      if (Buffer.byteLength(buffered) > LINE_MAX_BYTES) return refuse('hook line too long');
      const newline = buffered.indexOf('\n');
      if (newline < 0) return;
      taken = true;
      let raw: unknown;
      try {
        raw = JSON.parse(buffered.slice(0, newline));
      } catch {
        return refuse('hook line is not JSON');
      }
      const line = HookLineSchema.safeParse(raw);
      if (!line.success) return refuse('hook line has the wrong shape');
      const shown = Buffer.from(line.data.secret);
      if (shown.length !== this.secret.length || !timingSafeEqual(shown, this.secret)) return refuse('wrong secret');
      handle({
        cli: line.data.cli,
        ...(line.data.pid !== undefined ? { pid: line.data.pid } : {}),
        event: line.data.event,
        answer: (output) => {
          if (answered) return;
          answered = true;
          socket.end(`${JSON.stringify(output ? { output } : {})}\n`);
        },
        onGone: (listener) => gone.push(listener),
      });
    });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.file, { force: true });
  }
}
