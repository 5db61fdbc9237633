// The lobby of one host: the socket an app keeps open per host it shows. It carries the host-wide
// requests (`chat.list`, `chat.create`, `provider.list`, …), every chat's `chat.status` (kept here by
// chat id, so a list can draw live status without a chat socket each) and the host's presence.
import { terminalApprovalShown, type ChatInfo, type FramePort, type Request, type SettledRequest } from '../contracts/index.ts';
import type { RelayApi } from './api.ts';
import { LiveSocket, type EventFrame, type LiveSocketOptions } from './live-socket.ts';
import { relayPaths } from './socket.ts';
import { TerminalSessionsView } from './terminal-sessions.ts';

export class HostConnection extends LiveSocket implements FramePort {
  /** The newest info of every chat the lobby told of (`chat.status`, `chat.list`), by chat id. */
  readonly statuses = new Map<string, ChatInfo>();
  private readonly statusListeners = new Set<(info: ChatInfo) => void>();
  /** The sessions people run in their own terminal on this host (session.* events). */
  readonly terminal = new TerminalSessionsView();
  private readonly terminalListeners = new Set<(sessionId: string) => void>();

  constructor(api: RelayApi, hostId: string, options: LiveSocketOptions = {}) {
    super(api, hostId, relayPaths.lobby(api.baseUrl, hostId), options);
    this.start();
  }

  /** The terminal approval a `session.approve` names, as this client shows it: a signed answer names exactly that one. */
  protected override shownRequest(type: string, payload: unknown): SettledRequest | null {
    if (type !== 'session.approve') return null;
    const p = (typeof payload === 'object' && payload !== null ? payload : {}) as { sessionId?: unknown; requestId?: unknown };
    if (typeof p.sessionId !== 'string') return null;
    const approval = this.terminal.approvalsOf(p.sessionId).find((a) => a.requestId === p.requestId);
    return approval ? terminalApprovalShown(approval) : null;
  }

  /** The FramePort shape: a frame as it is, on the open socket. */
  send(frame: Request): void {
    this.sendFrame(frame);
  }

  /** Called with each chat's info as its status changes. */
  onStatus(listener: (info: ChatInfo) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  /** Called with a terminal session's id when its status, items or approvals change. */
  onTerminal(listener: (sessionId: string) => void): () => void {
    this.terminalListeners.add(listener);
    return () => this.terminalListeners.delete(listener);
  }

  /** Every terminal session the host knows and their approvals; also refreshes `terminal`. */
  async terminalSessions(): Promise<TerminalSessionsView> {
    this.terminal.load(await this.request('session.list', {}));
    for (const session of this.terminal.sessions.keys()) for (const listener of this.terminalListeners) listener(session);
    return this.terminal;
  }

  /** The host's chats (from the relay's index while the host is offline); also refreshes `statuses`. */
  async chats(): Promise<ChatInfo[]> {
    const { chats } = await this.request('chat.list', {});
    for (const info of chats) this.status(info);
    return chats;
  }

  protected override async opened(): Promise<void> {
    // Nothing to replay: statuses are state, not a log. They are read again once open (afterOpen).
  }

  protected override afterOpen(): void {
    // Statuses that changed while this socket was down came to nobody: read them all again.
    void this.chats().catch(() => undefined);
    if (this.terminalListeners.size > 0) void this.terminalSessions().catch(() => undefined);
  }

  protected override take(frame: EventFrame): void {
    if (frame.event === 'chat.status' && typeof frame.payload.chatId === 'string') this.status(frame.payload.info as ChatInfo);
    const session = this.terminal.take(frame);
    if (session !== null) for (const listener of this.terminalListeners) listener(session);
  }

  private status(info: ChatInfo): void {
    this.statuses.set(info.chatId, info);
    for (const listener of this.statusListeners) listener(info);
  }
}
