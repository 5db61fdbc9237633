// A subagent: one row with its own work folded inside (the items whose `parentToolUseId` names it,
// nested subagents in theirs), its prompt and the report it handed back. When the thread holds only
// the start of its work (`itemsTruncated`), the rest is read on request with `chat.subagent`.
import { useContext, useState } from 'preact/hooks';
import type { ChatItem, ChatSubagentItem } from '../../../contracts/index.ts';
import { Fold } from './Fold.tsx';
import { formatDuration, formatTokens } from './format.ts';
import { ItemBody } from './ItemView.tsx';
import { Markdown } from './Markdown.tsx';
import { ThreadScopeContext } from './scope.ts';

const STATUS_LABEL = { running: 'running', done: 'done', failed: 'failed' } as const;

function RestOfWork({ item }: { item: ChatSubagentItem }) {
  const scope = useContext(ThreadScopeContext)!;
  const [rest, setRest] = useState<{ items: ChatItem[]; cursor: string | null } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const load = async () => {
    setBusy(true);
    setError(null);
    try {
      const page = await scope.channel.request('chat.subagent', {
        chatId: scope.chatId, toolUseId: item.toolUseId, ...(rest?.cursor ? { cursor: rest.cursor } : {}),
      });
      setRest({ items: [...(rest?.items ?? []), ...page.items], cursor: page.history.cursor });
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="subagent-rest">
      {rest?.items.map((child) => <ItemBody key={child.id} item={child} />)}
      {error ? <p class="notice error" role="alert">{error}</p> : null}
      {!rest || rest.cursor
        ? <button type="button" class="link-button" disabled={busy} onClick={() => void load()}>{busy ? 'Loading…' : 'Show the rest of its work'}</button>
        : null}
    </div>
  );
}

export function Subagent({ item }: { item: ChatSubagentItem }) {
  const scope = useContext(ThreadScopeContext)!;
  const status = STATUS_LABEL[item.status];
  const kind = item.subagentType ?? 'Subagent';
  const usage = item.usage;
  return (
    <Fold
      foldKey={item.id}
      className={`subagent status-${item.status}`}
      label={`${kind}: ${item.description} (${status}), show its work`}
      head={<>
        <span class={`tool-state state-${item.status === 'failed' ? 'error' : item.status}`} aria-hidden="true" />
        <span class="tool-name">{kind}</span>
        <span class="tool-subject">{item.description}</span>
        {item.status === 'running' && item.lastTool ? <span class="subagent-last">{item.lastTool}</span> : null}
        {usage ? <span class="subagent-usage">{usage.toolUses} tools · {formatTokens(usage.totalTokens)} tokens · {formatDuration(usage.durationMs)}</span> : null}
        <span class="visually-hidden">{status}</span>
      </>}
    >
      {() => <div class="subagent-work">
        {item.prompt ? <p class="subagent-prompt">{item.prompt}</p> : null}
        {scope.childrenOf(item.id).map((child) => <ItemBody key={child.id} item={child} />)}
        {item.itemsTruncated ? <RestOfWork item={item} /> : null}
        {item.result ? <Markdown className="subagent-result" cacheKey={`${item.id}:result`} text={item.result} /> : item.summary ? <p class="subagent-summary">{item.summary}</p> : null}
      </div>}
    </Fold>
  );
}
