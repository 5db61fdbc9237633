// What an item view may need beyond its item: the channel (W3's cards answer through it), the host and
// chat it is on, and the items nested under a subagent. One object per open thread, handed down by
// context so that a memoized row re-renders only for its own changes.
import { createContext } from 'preact';
import type { ChatChannel } from '../../../client/index.ts';
import type { ChatItem } from '../../../contracts/index.ts';

export interface ThreadScope {
  channel: ChatChannel;
  hostId: string;
  chatId: string;
  /** The items drawn directly under this subagent item, in thread order. */
  childrenOf(subagentId: string): ChatItem[];
}

export const ThreadScopeContext = createContext<ThreadScope | null>(null);
