// A subagent: one row with its own work folded inside (the items whose `parentToolUseId` names it,
// nested subagents in theirs), its prompt and the report it handed back. Its whole work, as the CLI's
// own transcript of it holds it, is read on request with `chat.subagent` (the rest of it, when the
// thread holds only the start: `itemsTruncated`). A row a host task opened (`origin: ruimte`) has no
// such transcript. A running one has a Stop beside its head (`chat.stopSubagent`: Claude Code stops
// its task, Codex interrupts its thread's turn); the row settles when the CLI reports it ended, and a
// CLI that cannot stop one subagent says so under it.
import { useContext, useState } from 'preact/hooks';
import type { ChatItem, ChatSubagentItem } from '../../../contracts/index.ts';
import { Fold } from './Fold.tsx';
import { formatDuration, formatTokens } from './format.ts';
import { ItemBody } from './ItemView.tsx';
import { Markdown } from './Markdown.tsx';
import { ThreadScopeContext } from './scope.ts';
import { errorText } from '../tools/action.ts';

const STATUS_LABEL = { running: 'running', done: 'done', failed: 'failed' } as const;

/**
 * The subagent's own work as the CLI's transcript of it holds it (`chat.subagent`), on request: the
 * host pages it newest first, so the first page is its latest work and each further page is earlier.
 * When the thread holds only the start (`itemsTruncated`) this is the rest; otherwise it is the whole
 * record in place of the lines the thread streamed (which a restart or a late join may have missed).
 */
function FullWork({ item, inline }: { item: ChatSubagentItem; inline: ChatItem[] }) {
  const scope = useContext(ThreadScopeContext)!;
  const [pages, setPages] = useState<{ items: ChatItem[]; cursor: string | null; live: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const load = async (older: boolean) => {
    setBusy(true);
    setError(null);
    try {
      const page = await scope.channel.request('chat.subagent', {
        chatId: scope.chatId,
        toolUseId: item.toolUseId,
        ...(older && pages?.cursor ? { cursor: pages.cursor } : {}),
      });
      setPages({ items: older && pages ? [...page.items, ...pages.items] : page.items, cursor: page.history.cursor, live: page.live });
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  };
  const label = item.itemsTruncated ? 'Show the rest of its work' : 'Show its full work';
  return (
    <div class="subagent-full" data-loaded={pages ? 'true' : undefined}>
      {pages?.cursor ? (
        <button type="button" class="link-button" disabled={busy} onClick={() => void load(true)}>
          {busy ? 'Loading…' : 'Show earlier work'}
        </button>
      ) : null}
      {(pages ? pages.items : inline).map((child) => (
        <ItemBody key={child.id} item={child} />
      ))}
      {pages ? (
        <p class="muted small subagent-source">
          {pages.items.length === 0 ? 'Its transcript holds no work yet. ' : ''}From the CLI's own transcript{pages.live ? ', still being written' : ''}.{' '}
          <button type="button" class="link-button" disabled={busy} onClick={() => void load(false)}>
            {busy ? 'Loading…' : 'Read it again'}
          </button>
        </p>
      ) : null}
      {error ? (
        <p class="notice error" role="alert">
          {error}
        </p>
      ) : null}
      {!pages ? (
        <button type="button" class="link-button" disabled={busy} onClick={() => void load(false)}>
          {busy ? 'Loading…' : label}
        </button>
      ) : null}
    </div>
  );
}

/** Stop for a running subagent the CLI opened; stays "Stopping…" until the row settles, an error under it when refused. */
function StopSubagent({ item }: { item: ChatSubagentItem }) {
  const scope = useContext(ThreadScopeContext)!;
  const [stopping, setStopping] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const stop = async () => {
    setStopping(true);
    setError(null);
    try {
      await scope.channel.request('chat.stopSubagent', { chatId: scope.chatId, toolUseId: item.toolUseId });
    } catch (failure) {
      setError(errorText(failure));
      setStopping(false);
    }
  };
  return (
    <>
      <button type="button" class="danger small-button subagent-stop" disabled={stopping} aria-label={`Stop ${item.description}`} onClick={() => void stop()}>
        {stopping ? 'Stopping…' : 'Stop'}
      </button>
      {error ? (
        <span class="request-error subagent-stop-error" role="alert">
          {error}
        </span>
      ) : null}
    </>
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
      aside={item.status === 'running' && item.origin !== 'ruimte' ? <StopSubagent key={item.toolUseId} item={item} /> : null}
      head={
        <>
          <span class={`tool-state state-${item.status === 'failed' ? 'error' : item.status}`} aria-hidden="true" />
          <span class="tool-name">{kind}</span>
          <span class="tool-subject">{item.description}</span>
          {item.status === 'running' && item.lastTool ? <span class="subagent-last">{item.lastTool}</span> : null}
          {usage ? (
            <span class="subagent-usage">
              {usage.toolUses} tools · {formatTokens(usage.totalTokens)} tokens · {formatDuration(usage.durationMs)}
            </span>
          ) : null}
          <span class="visually-hidden">{status}</span>
        </>
      }
    >
      {() => (
        <div class="subagent-work">
          {item.prompt ? <p class="subagent-prompt">{item.prompt}</p> : null}
          {item.origin === 'ruimte' ? (
            scope.childrenOf(item.id).map((child) => <ItemBody key={child.id} item={child} />)
          ) : (
            <FullWork item={item} inline={scope.childrenOf(item.id)} />
          )}
          {item.result ? (
            <Markdown className="subagent-result" cacheKey={`${item.id}:result`} text={item.result} />
          ) : item.summary ? (
            <p class="subagent-summary">{item.summary}</p>
          ) : null}
        </div>
      )}
    </Fold>
  );
}
