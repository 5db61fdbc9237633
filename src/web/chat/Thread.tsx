// The thread: a virtualized list (react-virtual, rows measured as they draw) over the ThreadModel.
//
// - Per event, little work: thread changes are gathered and applied once per animation frame; rows
//   are laid out again only when rows come or go (items/rows.ts), and only the rows whose items
//   changed re-render (ItemRow is memoized on the item object and a per-row revision).
// - Streaming does not jump: the virtualizer is anchored to the end (`anchorTo: 'end'`): while the
//   person is at the bottom, growth and new rows keep them there (`followOnAppend`); once they
//   scrolled up, nothing moves under them and a "new messages" button offers the way back down.
// - Older pages load as the person nears the top (`thread.loadOlder()`); the end anchor keeps the
//   row they were reading where it was while rows are prepended above it.
// - `focusedItem` (focus.ts) scrolls to an item, loading older pages until it is found.
import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useLayoutEffect, useMemo, useReducer, useRef, useState } from 'preact/hooks';
import type { ChatChannel, ThreadModel } from '../../client/index.ts';
import type { ChatItem } from '../../contracts/index.ts';
import { Icon } from '../app/icons.tsx';
import { focusedItem } from './focus.ts';
import { prerenderMarkdown } from './markdown.ts';
import { ItemRow, VisualRow } from './items/ItemView.tsx';
import { layoutThread, type Row, type ThreadLayout } from './items/rows.ts';
import { ThreadScopeContext, type ThreadScope } from './items/scope.ts';

/** Within this many pixels of the bottom counts as "at the bottom". */
const END_SLACK = 40;
/** Older pages are asked for while the view is within this many screens of the top. */
const PREFETCH_SCREENS = 1.5;
/** Room above the first row for the "loading older" / "start of the chat" line. */
const EDGE_HEIGHT = 40;
/** How long a focused item stays highlighted. */
const HIGHLIGHT_MS = 2_500;

/** A first guess at a row's height before it is measured: close guesses keep the scrollbar steady. */
function estimateRow(row: Row, thread: ThreadModel): number {
  if (row.kind === 'visual') return 240;
  if (row.kind === 'turn') return 44;
  const item = thread.get(row.id);
  switch (item?.kind) {
    case 'assistant':
      return 36 + Math.ceil(item.text.length / 70) * 22;
    case 'user':
      return 56 + Math.ceil(item.text.length / 60) * 22;
    case 'approval':
    case 'question':
      return 180;
    case 'compaction':
      return 40;
    default:
      return 46;
  }
}

/** The markdown texts of settled items (key and text as items/ draws them), to render ahead. */
function* settledTexts(items: readonly ChatItem[]): Iterable<readonly [string, string]> {
  for (const item of items) {
    if (item.kind === 'assistant' && !item.streaming) yield [item.id, item.text];
    else if (item.kind === 'subagent' && item.result) yield [`${item.id}:result`, item.result];
  }
}

interface Live {
  layout: ThreadLayout;
  /** The thread's version the layout was made at. */
  version: number;
  /** Row key → revision, bumped when anything drawn in that row changed. */
  revs: Map<string, number>;
}

export function Thread({ channel, hostId, chatId }: { channel: ChatChannel; hostId: string; chatId: string }) {
  const thread = channel.thread;
  const scrollRef = useRef<HTMLDivElement>(null);
  const [, redraw] = useReducer((n: number) => n + 1, 0);
  const live = useRef<Live>(null as unknown as Live);
  live.current ??= { layout: layoutThread(thread.items, thread.visuals, thread.hasOlder), version: thread.version, revs: new Map() };
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [olderError, setOlderError] = useState<string | null>(null);
  const [atEnd, setAtEnd] = useState(true);
  const [unseen, setUnseen] = useState(false);
  const [highlight, setHighlight] = useState<string | null>(null);
  const atEndRef = useRef(true);
  const loadingRef = useRef(false);
  const flushRef = useRef<() => void>(() => undefined);
  /** The view's height as last seen (clientHeight), to tell it changed size. */
  const viewHeight = useRef(0);

  const scope = useMemo<ThreadScope>(
    () => ({
      channel,
      hostId,
      chatId,
      childrenOf: (id) => (live.current.layout.children.get(id) ?? []).map((child) => thread.get(child)).filter((c): c is ChatItem => c !== undefined),
    }),
    [channel, hostId, chatId, thread],
  );

  // Thread changes → one redraw per frame, touching only what changed.
  useEffect(() => {
    let frame = 0;
    let relayout = false;
    let newer = false;
    let bulk = false;
    const changed = new Set<string>();
    const flush = () => {
      if (frame) cancelAnimationFrame(frame);
      frame = 0;
      const state = live.current;
      if (relayout) state.layout = layoutThread(thread.items, thread.visuals, thread.hasOlder);
      relayout = false;
      if (bulk) prerenderMarkdown(settledTexts(thread.items));
      bulk = false;
      state.version = thread.version;
      for (const id of changed) {
        const key = state.layout.rowOf.get(id);
        if (key) state.revs.set(key, (state.revs.get(key) ?? 0) + 1);
      }
      changed.clear();
      if (newer && !atEndRef.current) setUnseen(true);
      newer = false;
      redraw(0);
    };
    flushRef.current = flush;
    const unsubscribe = thread.subscribe((change) => {
      switch (change.kind) {
        case 'snapshot':
        case 'older':
          bulk = true;
          relayout = true;
          break;
        case 'visuals':
          relayout = true;
          break;
        case 'item': {
          const item = thread.items[change.index];
          if (change.added || item?.kind === 'turn' || !live.current.layout.rowOf.has(change.id)) relayout = true;
          if (change.added) newer = true;
          changed.add(change.id);
          // An approval coming or settling changes how its tool's row reads (waiting, or running).
          if (item?.kind === 'approval' && item.toolUseId) {
            const tool = thread.items.findLast((i) => i.kind === 'tool' && i.toolUseId === item.toolUseId);
            if (tool) changed.add(tool.id);
          }
          break;
        }
        case 'delta':
          changed.add(change.id);
          newer = true;
          break;
        default:
          return; // info, bookmarks, pending: drawn elsewhere
      }
      frame ||= requestAnimationFrame(flush);
    });
    // What changed between the first draw and this subscription (an attach answer can be that quick).
    prerenderMarkdown(settledTexts(thread.items));
    if (thread.version !== live.current.version) {
      relayout = true;
      flush();
    }
    // The view getting shorter from below is noticed by whichever comes first: this observer, or a
    // scroll event that measures the new size before the observer has run (onScroll).
    const el = scrollRef.current;
    viewHeight.current = el?.clientHeight ?? 0;
    const resized = new ResizeObserver(() => {
      if (el) viewResized(el);
    });
    if (el) resized.observe(el);
    return () => {
      unsubscribe();
      resized.disconnect();
      if (frame) cancelAnimationFrame(frame);
    };
  }, [thread]);

  const { rows } = live.current.layout;
  const getItemKey = useCallback((index: number) => rows[index]!.key, [rows]);
  const estimateSize = useCallback((index: number) => estimateRow(rows[index]!, thread), [rows, thread]);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize,
    getItemKey,
    overscan: 6,
    paddingStart: EDGE_HEIGHT,
    paddingEnd: 12,
    anchorTo: 'end',
    followOnAppend: true,
    scrollEndThreshold: END_SLACK,
    // Scrolling moves rows by writing their positions straight to the DOM; the list is drawn again only
    // when rows come or go, not on every scroll event. Positions as `top`, not a 3D transform, which
    // would make every row a compositing layer of its own (measured: fewer dropped frames on a slow CPU).
    directDomUpdates: true,
    directDomUpdatesMode: 'position',
  });

  const loadOlder = useCallback(() => {
    if (loadingRef.current || !thread.hasOlder) return;
    loadingRef.current = true;
    setLoadingOlder(true);
    setOlderError(null);
    thread
      .loadOlder()
      .then(
        () => {
          flushRef.current();
        },
        (error: unknown) => setOlderError(error instanceof Error ? error.message : String(error)),
      )
      .finally(() => {
        loadingRef.current = false;
        setLoadingOlder(false);
      });
  }, [thread]);

  // The view getting shorter from below (on a phone the composer grows while a turn runs; a keyboard
  // opens) keeps its scrollTop, so the newest rows slip out of sight though the person did not move:
  // the virtualizer, now past its end slack, stops following appends. A person at the end is kept
  // there. Called by the ResizeObserver and by every scroll event, since either may see the new size
  // first: a scroll event already due (the view following a new row) is handled before the observer
  // runs, and judged alone it would take the shrink for the person leaving the end, for good.
  // Answers whether the view changed size (the scroll event then says nothing about the person).
  const viewResized = (el: HTMLElement): boolean => {
    if (el.clientHeight === viewHeight.current) return false;
    viewHeight.current = el.clientHeight;
    if (atEndRef.current) virtualizer.scrollToEnd();
    return true;
  };

  const onScroll = useCallback(() => {
    const el = scrollRef.current;
    if (!el) return;
    if (viewResized(el) && atEndRef.current) return;
    const end = el.scrollHeight - el.scrollTop - el.clientHeight <= END_SLACK;
    if (end !== atEndRef.current) {
      atEndRef.current = end;
      setAtEnd(end);
      if (end) setUnseen(false);
    }
    if (el.scrollTop < el.clientHeight * PREFETCH_SCREENS && !olderError) loadOlder();
  }, [loadOlder, olderError]);

  // After an older page (or a short first page) the view may still be near the top: keep loading.
  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (!el || loadingOlder || olderError || !thread.hasOlder || !thread.attached) return;
    if (el.scrollHeight <= el.clientHeight || (!atEndRef.current && el.scrollTop < el.clientHeight * PREFETCH_SCREENS)) loadOlder();
  });

  // Bring a focused item into view: load older pages until it is there, then scroll, highlight, focus.
  useEffect(() => {
    let highlightTimer: ReturnType<typeof setTimeout> | undefined;
    const goTo = async (id: string) => {
      flushRef.current();
      let key = live.current.layout.rowOf.get(id);
      try {
        // Each page is at most the protocol's 100 items; the bound only stops a history that never ends.
        for (let pages = 0; !key && thread.hasOlder && pages < 10_000; pages++) {
          await thread.loadOlder();
          flushRef.current();
          key = live.current.layout.rowOf.get(id);
        }
      } catch (error) {
        setOlderError(error instanceof Error ? error.message : String(error));
      }
      if (focusedItem.peek() === id) focusedItem.value = null;
      if (!key) return;
      const index = live.current.layout.indexOf.get(key);
      if (index === undefined) return;
      // The person chose a place that is not the end: a later change of the view's size (a panel
      // closing, the composer shrinking) must not take them back there.
      atEndRef.current = false;
      setAtEnd(false);
      virtualizer.scrollToIndex(index, { align: 'center' });
      setHighlight(key);
      clearTimeout(highlightTimer);
      highlightTimer = setTimeout(() => setHighlight(null), HIGHLIGHT_MS);
      requestAnimationFrame(() =>
        requestAnimationFrame(() => {
          const row = scrollRef.current?.querySelector<HTMLElement>(`[data-row="${CSS.escape(key!)}"]`);
          row?.focus({ preventScroll: true });
        }),
      );
    };
    const stop = focusedItem.subscribe((id) => {
      if (id) void goTo(id);
    });
    return () => {
      stop();
      clearTimeout(highlightTimer);
    };
  }, [thread, virtualizer]);

  const jumpToEnd = () => {
    setUnseen(false);
    virtualizer.scrollToEnd();
  };

  const { revs } = live.current;
  const visuals = thread.visuals;
  return (
    <ThreadScopeContext.Provider value={scope}>
      <div class="thread">
        <div class="thread-scroll" ref={scrollRef} onScroll={onScroll} tabIndex={0} role="region" aria-label="Messages">
          <div class="thread-list" ref={virtualizer.containerRef}>
            <div class="thread-edge" style={{ height: `${EDGE_HEIGHT}px` }}>
              {!thread.attached ? (
                <span>Loading the chat…</span>
              ) : olderError ? (
                <span class="notice error">
                  Older messages did not load ({olderError}).{' '}
                  <button
                    type="button"
                    class="link-button"
                    onClick={() => {
                      setOlderError(null);
                      loadOlder();
                    }}
                  >
                    Try again
                  </button>
                </span>
              ) : thread.hasOlder ? (
                <span aria-busy={loadingOlder}>{loadingOlder ? 'Loading older messages…' : 'Older messages'}</span>
              ) : (
                <span>{rows.length ? 'Start of the chat' : 'No messages yet. Say hello below.'}</span>
              )}
            </div>
            {virtualizer.getVirtualItems().map((virtual) => {
              const row = rows[virtual.index]!;
              const item = row.kind === 'visual' ? undefined : thread.get(row.id);
              const visual = row.kind === 'visual' ? visuals.find((v) => v.id === row.id) : undefined;
              return (
                <div
                  key={row.key}
                  data-index={virtual.index}
                  data-row={row.key}
                  data-kind={item?.kind ?? 'visual'}
                  ref={virtualizer.measureElement}
                  class={`thread-row${highlight === row.key ? ' focused' : ''}`}
                  tabIndex={-1}
                >
                  {item ? <ItemRow item={item} rev={revs.get(row.key) ?? 0} /> : visual ? <VisualRow visual={visual} /> : null}
                </div>
              );
            })}
          </div>
        </div>
        {!atEnd && (unseen || rows.length > 0) ? (
          <button type="button" class={`jump-to-end${unseen ? ' unseen' : ''}`} onClick={jumpToEnd}>
            {unseen ? 'New messages' : 'Jump to the newest'} <Icon name="down" />
          </button>
        ) : null}
      </div>
    </ThreadScopeContext.Provider>
  );
}
