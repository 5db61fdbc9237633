// AcpPeer: one ACP agent process and the SDK's client connection to it.
//
// The process is a CliProcess (its own process group, polite shutdown, stdout as lines). Requests,
// responses, ids and the typed agent methods are the SDK's (`client()` … `connect(stream)`); this
// file only frames lines into its Stream, with one exception made on purpose: `session/update`
// notifications are taken out of the stream and handed on raw, in arrival order, synchronously.
//   - The SDK checks every update against its schema first and drops (with a console error) any it
//     does not know, and this host must show unknown updates as notes instead of losing them.
//   - Handled on arrival, every update the agent sent before its answer to `session/prompt` has been
//     applied when that answer resolves, so a turn never ends before its last words.
// Permission and elicitation requests do go through the SDK, but with a parser that keeps their
// params as sent: a request carrying an option kind from a newer protocol must still be answerable.
import type {
  AnyMessage,
  ClientContext,
  CreateElicitationResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  Stream,
} from '@agentclientprotocol/sdk';
import { client, methods } from '@agentclientprotocol/sdk';
import { CliProcess } from '../cli-process.ts';
import type { CliExit } from '../cli-process.ts';
import type { AcpCommandLine } from './spec.ts';

export interface AcpPeerHandlers {
  /** One `session/update`'s params, unparsed, in the order the agent sent them. */
  onUpdate(params: unknown): void;
  /** Resolve with the person's answer; `signal` aborts when the agent withdrew the request. */
  onPermission(id: string, params: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse>;
  onElicitation(id: string, params: unknown, signal: AbortSignal): Promise<CreateElicitationResponse>;
  /** A stdout line that is not a JSON-RPC message. */
  onMalformed(line: string, reason: string): void;
  /** The process ended (on its own or by `end()`); called once, with its stderr tail. */
  onExit(exit: CliExit, stderr: string): void;
}

export class AcpPeer {
  /** The typed agent side: `agent.request(methods.agent.session.prompt, …)`. */
  readonly agent: ClientContext;
  private readonly process: CliProcess;
  private readonly inbound: ReadableStreamDefaultController<AnyMessage>;

  constructor(commandLine: AcpCommandLine, cwd: string, handlers: AcpPeerHandlers, options: { stdinGraceMs?: number } = {}) {
    let inbound!: ReadableStreamDefaultController<AnyMessage>;
    const readable = new ReadableStream<AnyMessage>({
      start(controller) {
        inbound = controller;
      },
    });
    this.inbound = inbound;
    const process = new CliProcess({
      command: commandLine.command,
      args: commandLine.args,
      cwd,
      env: commandLine.env,
      onLine: (line) => this.receive(line, handlers),
      onExit: (exit) => {
        try {
          inbound.close();
        } catch {
          // already closed
        }
        handlers.onExit(exit, process.stderr);
      },
      ...(options.stdinGraceMs !== undefined ? { stdinGraceMs: options.stdinGraceMs } : {}),
    });
    this.process = process;
    const writable = new WritableStream<AnyMessage>({
      write(message) {
        if (!process.writeLine(JSON.stringify(message))) throw new Error('the agent is no longer running');
      },
    });
    const stream: Stream = { readable, writable };
    let sequence = 0;
    const app = client({ name: 'tether' })
      .onRequest(methods.client.session.requestPermission, asSent<RequestPermissionRequest>(), ({ params, signal }) =>
        handlers.onPermission(String(++sequence), params, signal),
      )
      .onRequest(methods.client.elicitation.create, asSent<unknown>(), ({ params, signal }) => handlers.onElicitation(String(++sequence), params, signal));
    this.agent = app.connect(stream).agent;
  }

  get alive(): boolean {
    return this.process.alive;
  }

  get stderr(): string {
    return this.process.stderr;
  }

  /** Closes stdin, then signals the group; resolves once the agent exited. */
  end(): Promise<CliExit> {
    return this.process.end();
  }

  private receive(line: string, handlers: AcpPeerHandlers): void {
    if (line.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      handlers.onMalformed(line, 'not JSON');
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      handlers.onMalformed(line, 'not a JSON-RPC message');
      return;
    }
    const m = message as Record<string, unknown>;
    if (m.method === methods.client.session.update && !('id' in m)) {
      handlers.onUpdate(m.params);
      return;
    }
    try {
      this.inbound.enqueue(m as AnyMessage);
    } catch {
      // Lines the agent printed before it exited can arrive after its exit closed the stream: nobody waits for them.
    }
  }
}

/** A params parser that keeps the params as the agent sent them (the mapper reads them defensively). */
function asSent<T>(): (params: unknown) => T {
  return (params) => (params ?? {}) as T;
}
