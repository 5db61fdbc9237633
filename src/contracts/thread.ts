// A chat materialized from its events: what `chat.attach` snapshots and what every `chat.event` is
// applied to. The relay, the host and the client SDK all fold events through this one function set,
// so a thread means the same thing on every side.
import type { ChatEvent, ChatInfo, ChatItem } from './chat.ts';
import { CHAT_REQUEST_LIMITS } from './limits.ts';

export class Thread {
  info: ChatInfo;
  items: ChatItem[];
  private readonly index = new Map<string, number>();

  constructor(info: ChatInfo, items: ChatItem[] = []) {
    this.info = info;
    this.items = items;
    this.reindex();
  }

  get(id: string): ChatItem | undefined {
    const at = this.index.get(id);
    return at === undefined ? undefined : this.items[at];
  }

  positionOf(id: string): number | undefined {
    return this.index.get(id);
  }

  /** Applies one event; answers the item it touched (if any). A delta for an unknown item changes nothing. */
  apply(event: ChatEvent): ChatItem | undefined {
    switch (event.type) {
      case 'item':
        return this.upsert(event.item);
      case 'delta':
        return this.append(event.itemId, event.text);
      case 'info':
        this.info = event.info;
        return undefined;
      case 'reset':
        this.info = event.info;
        this.items = event.items.slice();
        this.reindex();
        return undefined;
    }
  }

  upsert(item: ChatItem): ChatItem {
    const at = this.index.get(item.id);
    if (at === undefined) {
      this.index.set(item.id, this.items.length);
      this.items.push(item);
    } else {
      this.items[at] = item;
    }
    return item;
  }

  private append(itemId: string, text: string): ChatItem | undefined {
    const item = this.get(itemId);
    if (!item || text.length === 0) return item;
    const next = appendDelta(item, text);
    if (next !== item) this.items[this.index.get(itemId)!] = next;
    return next;
  }

  private reindex(): void {
    this.index.clear();
    this.items.forEach((item, i) => this.index.set(item.id, i));
  }
}

/** A delta appends to a reply, a thought, or a running tool's streamed output; other kinds take none. */
export function appendDelta(item: ChatItem, text: string): ChatItem {
  switch (item.kind) {
    case 'assistant':
    case 'thinking':
      return { ...item, text: item.text + text };
    case 'tool': {
      const progress = item.progress ?? { startedAt: null, description: null, output: null };
      return { ...item, progress: { ...progress, output: (progress.output ?? '') + text } };
    }
    default:
      return item;
  }
}

/** `ChatInfo.requests` holds at most `CHAT_REQUEST_LIMITS.perChat`, oldest first; a host that sends more is cut here. */
export function withRequestLimit(info: ChatInfo): ChatInfo {
  const requests = info.requests;
  return requests && requests.length > CHAT_REQUEST_LIMITS.perChat ? { ...info, requests: requests.slice(0, CHAT_REQUEST_LIMITS.perChat) } : info;
}
