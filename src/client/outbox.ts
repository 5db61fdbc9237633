// Messages a person sent that have not been answered yet, kept on this device (per person: whoever
// signs in next on a shared browser must not send them as themselves): in IndexedDB in the
// browser (so a send made offline survives closing the tab), in memory in Node. Each is kept with the
// request id it will be sent under, before it is sent at all; ChatChannel sends them in order when the
// link is up and forgets each once it is delivered or refused. A resend after a reconnect (or a reload)
// reuses the id, and the relay answers a repeated id once: a message is never delivered twice. One the
// relay keeps for an offline host stays here as `queued`, never sent again, until the relay's queue
// lets it go (delivered) or says the host refused it (`chat.sendRefused`, kept by the relay for a
// device that was away then): a reload still learns how it ended.
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { ChatSendPayload, ChatSendResult, WireError } from '../contracts/index.ts';

/** Whose sends, to which chat: a browser's outbox is shared by whoever signs in on it. */
export interface OutboxScope {
  userId: string;
  hostId: string;
  chatId: string;
}

export interface OutboxEntry extends OutboxScope {
  /** The request id of its `chat.send`. */
  id: string;
  payload: ChatSendPayload;
  createdAt: number;
  /** Orders sends made in the same millisecond. */
  order: number;
  /** `queued`: the relay answered that it keeps it for the offline host; watched, not sent again. */
  state?: 'queued';
}

export interface OutboxStore {
  /** The entries of one person in one chat, oldest first. */
  list(scope: OutboxScope): Promise<OutboxEntry[]>;
  put(entry: OutboxEntry): Promise<void>;
  remove(id: string): Promise<void>;
}

let counter = 0;

/** A new entry's `order`: time first, then the order of sends within one millisecond. */
export function nextOrder(now = Date.now()): number {
  counter = (counter + 1) % 1000;
  return now * 1000 + counter;
}

export class MemoryOutboxStore implements OutboxStore {
  private readonly entries = new Map<string, OutboxEntry>();

  async list(scope: OutboxScope): Promise<OutboxEntry[]> {
    return [...this.entries.values()]
      .filter((e) => e.userId === scope.userId && e.hostId === scope.hostId && e.chatId === scope.chatId)
      .sort((a, b) => a.order - b.order);
  }

  async put(entry: OutboxEntry): Promise<void> {
    this.entries.set(entry.id, entry);
  }

  async remove(id: string): Promise<void> {
    this.entries.delete(id);
  }
}

interface OutboxDb extends DBSchema {
  sends: {
    key: string;
    value: OutboxEntry;
    indexes: { byChat: [string, string, string, number] };
  };
}

/** The browser's outbox: one IndexedDB database, one object store of entries indexed by chat and order. */
export class IdbOutboxStore implements OutboxStore {
  private readonly db: Promise<IDBPDatabase<OutboxDb>>;

  constructor(name = 'tether-outbox') {
    this.db = openDB<OutboxDb>(name, 2, {
      upgrade(db, oldVersion) {
        // Version 1 (never released) kept sends without their person.
        if (oldVersion >= 1) db.deleteObjectStore('sends');
        const sends = db.createObjectStore('sends', { keyPath: 'id' });
        sends.createIndex('byChat', ['userId', 'hostId', 'chatId', 'order']);
      },
    });
  }

  async list({ userId, hostId, chatId }: OutboxScope): Promise<OutboxEntry[]> {
    const range = IDBKeyRange.bound([userId, hostId, chatId, -Infinity], [userId, hostId, chatId, Infinity]);
    return (await this.db).getAllFromIndex('sends', 'byChat', range);
  }

  async put(entry: OutboxEntry): Promise<void> {
    await (await this.db).put('sends', entry);
  }

  async remove(id: string): Promise<void> {
    await (await this.db).delete('sends', id);
  }

  async close(): Promise<void> {
    (await this.db).close();
  }
}

let shared: OutboxStore | null = null;

/** IndexedDB where there is one (browsers), memory elsewhere; one store (one connection) for every channel. */
export function defaultOutboxStore(): OutboxStore {
  shared ??= typeof indexedDB === 'undefined' ? new MemoryOutboxStore() : new IdbOutboxStore();
  return shared;
}

/**
 * Where a message is on its way:
 * - `kept`: on this device, waiting for the link (offline, or the socket is down);
 * - `sent`: on the wire, no answer yet;
 * - `queued`: the relay keeps it because the host is offline, and delivers it when the host returns;
 * - `delivered`: the host took it (it may wait in the chat's own queue behind a running turn);
 * - `failed`: refused, with the `{code, message}` why.
 */
export type DeliveryState = 'kept' | 'sent' | 'queued' | 'delivered' | 'failed';

export class PendingSend {
  readonly id: string;
  readonly payload: ChatSendPayload;
  readonly createdAt: number;
  /** Its place among this person's sends to the chat (OutboxEntry.order). */
  readonly order: number;
  private currentState: DeliveryState;
  private failure: WireError | null = null;
  private answer: ChatSendResult | null = null;
  private readonly listeners = new Set<(send: PendingSend) => void>();
  private finish!: (send: PendingSend) => void;
  /** Resolves once the message is `delivered` or `failed`. */
  readonly settled: Promise<PendingSend>;

  constructor(entry: Pick<OutboxEntry, 'id' | 'payload' | 'createdAt'> & { order?: number }, state: DeliveryState = 'kept') {
    this.id = entry.id;
    this.payload = entry.payload;
    this.createdAt = entry.createdAt;
    this.order = entry.order ?? nextOrder(entry.createdAt);
    this.currentState = state;
    this.settled = new Promise((resolve) => {
      this.finish = resolve;
    });
  }

  get state(): DeliveryState {
    return this.currentState;
  }

  /** Why it failed. */
  get error(): WireError | null {
    return this.failure;
  }

  /** The relay's answer to the send, once it came. */
  get result(): ChatSendResult | null {
    return this.answer;
  }

  get done(): boolean {
    return this.currentState === 'delivered' || this.currentState === 'failed';
  }

  onChange(listener: (send: PendingSend) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Moves it on (ChatChannel's business); a settled send stays settled. */
  advance(state: DeliveryState, detail: { error?: WireError; result?: ChatSendResult } = {}): void {
    if (this.done || (state === this.currentState && !detail.result)) return;
    this.currentState = state;
    if (detail.error) this.failure = detail.error;
    if (detail.result) this.answer = detail.result;
    for (const listener of this.listeners) listener(this);
    if (this.done) this.finish(this);
  }
}
