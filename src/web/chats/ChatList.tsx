// The chat list across hosts: live status (needs-you stands out and sorts first), search by title, and
// the way to a new chat. On a desktop it stays beside the open chat.
import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { AgentStatus } from '../../contracts/index.ts';
import { currentUrl } from '../app/router.ts';
import { hosts, presence } from '../hosts/host-list.ts';
import { chatTitle, chatsError, chatsLoaded, loadChats, providerName, sortedChats, type ChatEntry } from './chat-index.ts';
import './chats.css';

const search = signal('');

const STATUS: Record<AgentStatus, string> = { running: 'Working', 'needs-you': 'Needs you', idle: 'Idle', error: 'Error', exited: 'Stopped' };
const DOT: Record<AgentStatus, string> = { running: 'running', 'needs-you': 'attention', idle: '', error: 'error', exited: '' };

export function ChatListPage() {
  useEffect(() => { void loadChats(); }, []);
  // Every word searched for is somewhere in the title, in any order.
  const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
  const shown = sortedChats.value.filter((e) => {
    const title = chatTitle(e.info).toLowerCase();
    return words.every((word) => title.includes(word));
  });
  const needsYou = sortedChats.value.filter((e) => e.info.status === 'needs-you').length;
  return (
    <section class="chat-list page" aria-labelledby="chats-title">
      <div class="row">
        <h1 id="chats-title" class="grow">Chats</h1>
        <a class="button primary" href="/chats/new">New chat</a>
      </div>
      {needsYou > 0 && <p class="needs-you-summary" role="status">{needsYou === 1 ? '1 chat needs you' : `${needsYou} chats need you`}</p>}
      <div class="search" role="search">
        <input type="search" placeholder="Search chats" aria-label="Search chats by title" value={search.value} onInput={(e) => { search.value = e.currentTarget.value; }} />
      </div>
      {chatsError.value && <p class="notice error" role="alert">{chatsError.value}</p>}
      {!chatsLoaded.value && !chatsError.value && shown.length === 0 && <p class="loading" aria-busy="true">Loading chats…</p>}
      {chatsLoaded.value && shown.length === 0 && (
        <p class="muted">{words.length > 0 ? 'No chat has that in its title.' : hosts.value?.length === 0 ? <>No hosts yet. <a href="/hosts">Pair one</a> to start chatting.</> : 'No chats yet.'}</p>
      )}
      <ul class="list chat-rows" aria-label="Chats">
        {shown.map((entry) => <ChatRow key={`${entry.hostId}/${entry.info.chatId}`} entry={entry} />)}
      </ul>
    </section>
  );
}

function ChatRow({ entry }: { entry: ChatEntry }) {
  const { info } = entry;
  const href = `/hosts/${encodeURIComponent(entry.hostId)}/chats/${encodeURIComponent(info.chatId)}`;
  const open = currentUrl.value.split('?')[0] === href;
  const hostOnline = presence.value.get(entry.hostId) ?? hosts.value?.find((h) => h.id === entry.hostId)?.online ?? false;
  const needsYou = info.status === 'needs-you';
  const title = chatTitle(info);
  return (
    <li>
      <a class={`chat-row${needsYou ? ' needs-you' : ''}`} href={href} aria-current={open ? 'page' : undefined} data-status={info.status}>
        <span class={`dot ${DOT[info.status]}`} aria-hidden="true" />
        <span class="chat-row-main">
          <span class="chat-row-title">{title}</span>
          <span class="chat-row-meta muted small">
            {entry.hostName} · {providerName(info.provider)}{hostOnline ? '' : ' · host offline'}
          </span>
        </span>
        <span class={`badge${needsYou ? ' attention' : ''}`}>{STATUS[info.status]}</span>
      </a>
    </li>
  );
}
