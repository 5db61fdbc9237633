// One chat on a real CLI behind a real host process, as the CLI end-to-end tests use it: a host
// started with a given config, a lobby and one attached client, and waits on what that client holds.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { until } from '../support/until.ts';
import { type HostProcess, Peer } from './peers.ts';

type Item = Record<string, any>;

export class CliChat {
  readonly host: HostProcess;
  readonly chatId: string;
  lobby!: Peer;
  client!: Peer;
  /** Other chats of the same host this one joined (forks); closed with it. */
  private readonly joined: CliChat[] = [];

  constructor(host: HostProcess, chatId: string) {
    this.host = host;
    this.chatId = chatId;
  }

  /** Writes the host config, starts the host and opens the chat with `create` (provider, cwd, mode). */
  async open(config: unknown, create: Record<string, unknown>): Promise<this> {
    writeFileSync(path.join(this.host.dataDir, 'config.json'), JSON.stringify(config));
    await this.host.start();
    this.lobby = await Peer.lobby(this.host.hostId, this.host.ownerId);
    await this.lobby.waitFor((f) => f.event === 'host.presence' && f.payload.online, 'host online');
    await this.lobby.socket.request('chat.create', { chatId: this.chatId, ...create });
    this.client = await Peer.chat(this.host.hostId, this.chatId, this.host.ownerId);
    await this.client.socket.request('chat.attach', { chatId: this.chatId });
    return this;
  }

  /** Another chat of the same host (e.g. a fork), with a client of its own attached to it. */
  async join(chatId: string): Promise<CliChat> {
    const other = new CliChat(this.host, chatId);
    other.lobby = this.lobby;
    other.client = await Peer.chat(this.host.hostId, chatId, this.host.ownerId);
    await other.client.socket.request('chat.attach', { chatId });
    this.joined.push(other);
    return other;
  }

  async close(): Promise<void> {
    for (const other of this.joined) other.client.close();
    this.lobby?.close();
    this.client?.close();
    await this.host.stop();
  }

  items(): Item[] {
    return [...this.client.items().values()];
  }

  inTurn(turnId: string): Item[] {
    return this.items().filter((i) => i.turnId === turnId);
  }

  turn(turnId: string): Item | undefined {
    return this.items().find((i) => i.kind === 'turn' && i.id === turnId);
  }

  /** The chat's info as the newest `info` event the client got carries it. */
  info(): Item {
    return this.client.frames.filter((f) => f.event === 'chat.event' && f.payload.event.type === 'info').at(-1)!.payload.event.info;
  }

  until<T>(check: () => T | undefined | null | false, what: string, ms = 45_000): Promise<T> {
    return until(check, what, { ms, every: 25, detail: () => this.host.output.slice(-3000) });
  }

  /** Sends a message that starts a turn now; answers its turn id. */
  async send(text: string): Promise<string> {
    const sent = await this.client.socket.request('chat.send', { chatId: this.chatId, text });
    expect(sent.queued).toBe(false);
    return sent.turnId as string;
  }

  /** Waits until the turn settled; answers its item. */
  settled(turnId: string): Promise<Item> {
    return this.until(() => {
      const turn = this.turn(turnId);
      return turn && turn.state !== 'running' ? turn : undefined;
    }, `turn ${turnId} to settle`);
  }

  request(type: string, payload: Record<string, unknown>): Promise<any> {
    return this.client.socket.request(type as never, { chatId: this.chatId, ...payload } as never);
  }
}
