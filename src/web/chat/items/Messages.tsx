// The plain kinds: what the person wrote, what the agent answered, what it thought, notes and
// compaction markers.
import type { ChatAssistantItem, ChatCompactionItem, ChatNoteItem, ChatThinkingItem, ChatUserItem } from '../../../contracts/index.ts';
import { Attachments } from './Attachments.tsx';
import { Fold } from './Fold.tsx';
import { formatDuration, formatTime, formatTokens } from './format.ts';
import { Markdown } from './Markdown.tsx';

export function UserMessage({ item }: { item: ChatUserItem }) {
  const refs = [...(item.mentions ?? []).map((m) => `@${m}`), ...(item.skills ?? []).map((s) => `$${s}`)];
  return (
    <article class="msg msg-user" aria-label={`You, ${formatTime(item.createdAt)}`}>
      {item.uiChoice ? <p class="ui-choice">Chose “{item.uiChoice.label}”</p> : null}
      {item.text ? <p class="user-text">{item.text}</p> : null}
      {refs.length ? (
        <p class="msg-refs">
          {refs.map((ref) => (
            <code key={ref}>{ref}</code>
          ))}
        </p>
      ) : null}
      {item.attachments?.length ? <Attachments attachments={item.attachments} /> : null}
    </article>
  );
}

export function AssistantMessage({ item }: { item: ChatAssistantItem }) {
  return (
    <article class={`msg msg-assistant${item.streaming ? ' streaming' : ''}${item.phase === 'commentary' ? ' commentary' : ''}`} aria-busy={item.streaming}>
      <Markdown cacheKey={item.id} text={item.text} />
    </article>
  );
}

export function Thinking({ item }: { item: ChatThinkingItem }) {
  const head = item.streaming || item.endedAt === null ? 'Thinking…' : `Thought for ${formatDuration(item.endedAt - item.createdAt)}`;
  return (
    <Fold foldKey={item.id} className="thinking" label={`${head} (show the thought)`} head={<span class="fold-title">{head}</span>}>
      {() => <p class="thinking-text">{item.text}</p>}
    </Fold>
  );
}

const NOTE_LABEL = { info: 'Note', warning: 'Warning', error: 'Error' } as const;

export function Note({ item, hostId }: { item: ChatNoteItem; hostId: string }) {
  return (
    <aside class={`note note-${item.level}`} aria-label={NOTE_LABEL[item.level]}>
      <span class="note-level">{NOTE_LABEL[item.level]}</span>
      <p class="note-text">{item.text}</p>
      {item.from ? (
        <a class="note-from" href={`/hosts/${encodeURIComponent(hostId)}/chats/${encodeURIComponent(item.from)}`}>
          From another chat
        </a>
      ) : null}
    </aside>
  );
}

export function Compaction({ item }: { item: ChatCompactionItem }) {
  return (
    <div class="compaction" role="separator" aria-label="Context compacted">
      <span>Context compacted{item.preTokens !== null ? ` (was ${formatTokens(item.preTokens)} tokens)` : ''}</span>
    </div>
  );
}
