// The chat list across hosts: live status (needs-you stands out and sorts first), search by title,
// folder and last line, and the way to a new chat. On a desktop it stays beside the open chat. A row
// shows the chat's title and when it was last active, its last line (ellipsised by CSS: the host
// already cut it), and its agent, host and folder; only the time labels re-render as minutes pass
// (the minute clock), the rows only when a chat changes.
import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { AgentStatus, ChatLastLine } from '../../contracts/index.ts';
import { minuteNow } from '../app/clock.ts';
import { Icon } from '../app/icons.tsx';
import { currentUrl } from '../app/router.ts';
import { hosts, presence } from '../hosts/host-list.ts';
import { lastActive } from '../hosts/time.ts';
import { agentNameOf, chatTitle, chatsError, chatsLoaded, lastActivity, loadChats, shortFolder, sortedChats, type ChatEntry } from './chat-index.ts';
import './chats.css';

const search = signal('');

const STATUS: Record<AgentStatus, string> = { running: 'Working', 'needs-you': 'Needs you', idle: 'Idle', error: 'Error', exited: 'Stopped' };
const DOT: Record<AgentStatus, string> = { running: 'running', 'needs-you': 'attention', idle: '', error: 'error', exited: '' };

export function ChatListPage() {
  useEffect(() => {
    void loadChats();
  }, []);
  // Every word searched for is somewhere in the title, the folder or the last line, in any order.
  const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
  const shown =
    words.length === 0
      ? sortedChats.value
      : sortedChats.value.filter((e) => {
          const text = `${chatTitle(e.info)}\n${e.info.cwd}\n${e.info.lastLine?.text ?? ''}`.toLowerCase();
          return words.every((word) => text.includes(word));
        });
  const needsYou = sortedChats.value.filter((e) => e.info.status === 'needs-you').length;
  return (
    <section class="chat-list page" aria-labelledby="chats-title">
      <div class="row">
        <h1 id="chats-title" class="grow">
          Chats
        </h1>
        <a class="button primary" href="/chats/new">
          New chat
        </a>
      </div>
      {needsYou > 0 && (
        <p class="needs-you-summary" role="status">
          {needsYou === 1 ? '1 chat needs you' : `${needsYou} chats need you`}
        </p>
      )}
      <div class="search" role="search">
        <input
          type="search"
          placeholder="Search chats"
          aria-label="Search chats by title, folder or last message"
          value={search.value}
          onInput={(e) => {
            search.value = e.currentTarget.value;
          }}
        />
      </div>
      {chatsError.value && (
        <p class="notice error" role="alert">
          {chatsError.value}
        </p>
      )}
      {!chatsLoaded.value && !chatsError.value && shown.length === 0 && (
        <p class="loading" aria-busy="true">
          Loading chats…
        </p>
      )}
      {chatsLoaded.value && shown.length === 0 && (
        <p class="muted">
          {words.length > 0 ? (
            'No chat has that in its title, folder or last message.'
          ) : hosts.value?.length === 0 ? (
            <>
              No hosts yet. <a href="/hosts">Pair one</a> to start chatting.
            </>
          ) : (
            'No chats yet.'
          )}
        </p>
      )}
      <ul class="list chat-rows" aria-label="Chats">
        {shown.map((entry) => (
          <ChatRow key={`${entry.hostId}/${entry.info.chatId}`} entry={entry} />
        ))}
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
          <span class="chat-row-top">
            <span class="chat-row-title">{title}</span>
            <LastActive at={lastActivity(entry)} />
          </span>
          {info.lastLine && <LastLine line={info.lastLine} />}
          <span class="chat-row-meta muted small">
            <span class="chat-row-folder" title={info.cwd}>
              <Icon name="folder" />
              <span class="visually-hidden">in </span>
              <span class="chat-row-cut">{shortFolder(info.cwd)}</span>
            </span>
            <span class="chat-row-agent">
              <span class="visually-hidden">with </span>
              {agentNameOf(info)}
            </span>
            <span class="chat-row-host">
              <Icon name="hosts" />
              <span class="visually-hidden">on </span>
              <span class="chat-row-cut">
                {entry.hostName}
                {hostOnline ? '' : ' (offline)'}
              </span>
            </span>
          </span>
        </span>
        <span class={`badge${needsYou ? ' attention' : ''}`}>{STATUS[info.status]}</span>
      </a>
    </li>
  );
}

/** Who said the chat's last line, as the row words it (the person may be a teammate, so never "You"). */
const SAID: Record<ChatLastLine['role'], string> = { user: 'Asked', assistant: 'Replied' };

function LastLine({ line }: { line: ChatLastLine }) {
  return (
    <span class="chat-row-line small" data-role={line.role}>
      <span class="chat-row-said">{SAID[line.role]}:</span> {line.text}
    </span>
  );
}

/** The only part of a row that reads the minute clock, so only it re-renders as time passes. */
function LastActive({ at }: { at: number }) {
  const date = new Date(at);
  // A time no Date can hold (a host's bad clock or record) shows nothing rather than break the list.
  if (Number.isNaN(date.getTime())) return null;
  return (
    <time class="chat-row-time muted small" dateTime={date.toISOString()} title={date.toLocaleString()}>
      {lastActive(at, minuteNow.value)}
    </time>
  );
}
