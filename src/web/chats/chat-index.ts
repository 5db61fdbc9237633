// Every chat the person may see across hosts, kept live: the relay's index first (offline hosts'
// chats too), then each host's `chat.status` through its lobby (host-list.ts). A chat that needs the
// person sorts first; the rest newest first.
import { computed, signal } from '@preact/signals';
import type { ChatInfo, IndexedChat } from '../../contracts/index.ts';
import { api } from '../app/session.ts';
import { hosts, loadHosts, onChatStatus } from '../hosts/host-list.ts';

export interface ChatEntry {
  hostId: string;
  hostName: string;
  role: IndexedChat['role'] | null;
  info: ChatInfo;
  updatedAt: number;
}

const entries = signal<ReadonlyMap<string, ChatEntry>>(new Map());
export const chatsLoaded = signal(false);
export const chatsError = signal<string | null>(null);

const keyOf = (hostId: string, chatId: string) => `${hostId}/${chatId}`;

/**
 * When a chat was last active: its last line's time (a message sent, a reply completed), else when
 * the relay or this page last heard of it (a chat from before last lines, or one nobody wrote in).
 */
export const lastActivity = (entry: ChatEntry): number => entry.info.lastLine?.at ?? entry.updatedAt;

/** Visible chats, needs-you first, then the most recently active (the order their times say). */
export const sortedChats = computed(() =>
  [...entries.value.values()].filter((e) => !e.info.hidden).sort((a, b) => rank(a) - rank(b) || lastActivity(b) - lastActivity(a)),
);

const rank = (entry: ChatEntry) => (entry.info.status === 'needs-you' ? 0 : 1);

let started: Promise<void> | null = null;
let stopStatus: (() => void) | null = null;

export function loadChats(): Promise<void> {
  stopStatus ??= onChatStatus(update);
  started ??= Promise.all([api.chats(), loadHosts()]).then(
    ([list]) => {
      const next = new Map(entries.value);
      // Live statuses that came first are newer than the index's copy.
      for (const chat of list) if (!next.has(keyOf(chat.hostId, chat.info.chatId))) next.set(keyOf(chat.hostId, chat.info.chatId), chat);
      entries.value = next;
      chatsLoaded.value = true;
      chatsError.value = null;
    },
    (error: unknown) => {
      chatsError.value = error instanceof Error ? error.message : String(error);
      started = null;
    },
  );
  return started;
}

// A host that left the list (revoked, access taken away) takes its chats with it.
hosts.subscribe((list) => {
  if (!list) return;
  const reachable = new Set(list.map((h) => h.id));
  if ([...entries.value.values()].every((e) => reachable.has(e.hostId))) return;
  entries.value = new Map([...entries.value].filter(([, e]) => reachable.has(e.hostId)));
});

function update(hostId: string, info: ChatInfo): void {
  const key = keyOf(hostId, info.chatId);
  const held = entries.value.get(key);
  const host = hosts.value?.find((h) => h.id === hostId);
  entries.value = new Map(entries.value).set(key, {
    hostId,
    hostName: host?.name ?? held?.hostName ?? hostId,
    role: held?.role ?? host?.role ?? null,
    info,
    updatedAt: Date.now(),
  });
}

/** A chat just made here: listed at once, before its host's status comes round. */
export function chatCreated(hostId: string, info: ChatInfo): void {
  update(hostId, info);
}

// What a chat is called (its title, else its agent and folder), the same here as in its header and exports.
export { agentNameOf, chatTitle, providerName, shortFolder } from '../../client/chat-title.ts';

api.onSignedOut(() => {
  stopStatus?.();
  stopStatus = null;
  started = null;
  entries.value = new Map();
  chatsLoaded.value = false;
});
