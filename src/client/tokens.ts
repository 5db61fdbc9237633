// Where a signed-in app keeps its session between page loads. The refresh token rotates on every use
// and the relay ends the whole session when a used one is presented again, so every tab of one origin
// must share one copy and refresh one at a time: the store holds the newest pair (the access token too,
// so a tab that finds its copy rotated adopts the other tab's token instead of refreshing again), and
// `exclusive` runs a refresh under a lock all tabs see (Web Locks where the browser has them).

import type { SessionTokens } from '../contracts/index.ts';

export type { SessionTokens };

export interface TokenStore {
  load(): SessionTokens | null;
  save(session: SessionTokens | null): void;
  /** Runs `refresh` so that no other holder of this store refreshes meanwhile. */
  exclusive<T>(refresh: () => Promise<T>): Promise<T>;
}

/** For Node programs and tests: one process, one copy. */
export class MemoryTokenStore implements TokenStore {
  private session: SessionTokens | null;

  constructor(session: SessionTokens | null = null) {
    this.session = session;
  }

  load(): SessionTokens | null {
    return this.session;
  }

  save(session: SessionTokens | null): void {
    this.session = session;
  }

  exclusive<T>(refresh: () => Promise<T>): Promise<T> {
    return refresh(); // RelayApi already makes refreshes single-flight within one process
  }
}

interface LocksLike {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}

/** The browser's: localStorage (shared by the origin's tabs), refreshes under a Web Lock. */
export class LocalStorageTokenStore implements TokenStore {
  private readonly key: string;
  private readonly storage: Storage;

  constructor(key = 'tether.session', storage: Storage = globalThis.localStorage) {
    this.key = key;
    this.storage = storage;
  }

  load(): SessionTokens | null {
    const raw = this.storage.getItem(this.key);
    if (!raw) return null;
    try {
      const parsed = JSON.parse(raw) as Partial<SessionTokens>;
      return typeof parsed.refreshToken === 'string' && typeof parsed.sessionId === 'string' ? (parsed as SessionTokens) : null;
    } catch {
      return null; // a damaged entry is no session: the person signs in again
    }
  }

  save(session: SessionTokens | null): void {
    if (session) this.storage.setItem(this.key, JSON.stringify(session));
    else this.storage.removeItem(this.key);
  }

  exclusive<T>(refresh: () => Promise<T>): Promise<T> {
    const locks = (globalThis.navigator as { locks?: LocksLike } | undefined)?.locks;
    return locks ? locks.request(`${this.key}:refresh`, refresh) : refresh();
  }
}
