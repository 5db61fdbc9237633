// How a thread's items become the rows of the list. Mostly one item is one row, with three
// exceptions: a subagent's own work (items whose `parentToolUseId` names it) is drawn inside its row,
// nested subagents inside theirs; a turn is drawn as a footer after the last item of that turn (the
// host puts the turn item first, before the work it sums up), and only once it settled (a running
// turn shows as the "working" line under the list); and visuals, which are not items, sit among the
// items by their time. One pass over the items, done only when rows come or go, never per delta.
import type { ChatItem, ChatVisual } from '../../../contracts/index.ts';

export type Row = { key: string; kind: 'item'; id: string } | { key: string; kind: 'turn'; id: string } | { key: string; kind: 'visual'; id: string };

export interface ThreadLayout {
  rows: Row[];
  /** The row each item is drawn in (a subagent's work: its subagent's row). */
  rowOf: Map<string, string>;
  /** A subagent item's id → the ids of the items drawn directly under it, in thread order. */
  children: Map<string, string[]>;
  /** Row key → index in `rows`. */
  indexOf: Map<string, number>;
}

export const rowKey = {
  item: (id: string) => `i:${id}`,
  turn: (id: string) => `t:${id}`,
  visual: (id: string) => `v:${id}`,
};

function parentOf(item: ChatItem): string | null {
  if (item.kind === 'assistant' || item.kind === 'tool' || item.kind === 'subagent') return item.parentToolUseId ?? null;
  return null;
}

/**
 * Lays out `items` (thread order). `visuals` older than the first loaded item are left out while
 * older pages remain (`hasOlder`): they belong to a page not loaded yet.
 */
export function layoutThread(items: readonly ChatItem[], visuals: readonly ChatVisual[], hasOlder: boolean): ThreadLayout {
  const subagentByTool = new Map<string, ChatItem>();
  const lastOfTurn = new Map<string, number>();
  items.forEach((item, i) => {
    if (item.kind === 'subagent') subagentByTool.set(item.toolUseId, item);
    if (item.turnId) lastOfTurn.set(item.turnId, i);
  });

  const rowOf = new Map<string, string>();
  const children = new Map<string, string[]>();
  const rows: Row[] = [];
  const turnsAt = new Map<number, ChatItem[]>();
  for (const item of items) {
    if (item.kind !== 'turn' || item.state === 'running') continue;
    const at = lastOfTurn.get(item.id) ?? -1;
    const list = turnsAt.get(at);
    if (list) list.push(item);
    else turnsAt.set(at, [item]);
  }

  const sortedVisuals = [...visuals].sort((a, b) => a.at - b.at);
  let v = 0;
  if (hasOlder && items.length > 0) while (v < sortedVisuals.length && sortedVisuals[v]!.at < items[0]!.createdAt) v++;
  const visualsUntil = (time: number) => {
    while (v < sortedVisuals.length && sortedVisuals[v]!.at <= time) {
      const visual = sortedVisuals[v++]!;
      rows.push({ key: rowKey.visual(visual.id), kind: 'visual', id: visual.id });
    }
  };

  /** The top-level row an item sits in: its outermost loaded subagent's, else its own. */
  const home = (item: ChatItem): ChatItem => {
    let at = item;
    for (let hops = 0; hops < 32; hops++) {
      const parent = parentOf(at);
      const owner = parent ? subagentByTool.get(parent) : undefined;
      if (!owner || owner === at) return at;
      at = owner;
    }
    return at;
  };

  items.forEach((item, i) => {
    if (item.kind !== 'turn') {
      visualsUntil(item.createdAt - 1);
      const parent = parentOf(item);
      const owner = parent ? subagentByTool.get(parent) : undefined;
      if (owner && owner !== item) {
        const list = children.get(owner.id);
        if (list) list.push(item.id);
        else children.set(owner.id, [item.id]);
        rowOf.set(item.id, rowKey.item(home(item).id));
      } else {
        const key = rowKey.item(item.id);
        rows.push({ key, kind: 'item', id: item.id });
        rowOf.set(item.id, key);
      }
    }
    for (const turn of turnsAt.get(i) ?? []) {
      if (turn.kind === 'turn' && turn.endedAt !== null) visualsUntil(turn.endedAt);
      const key = rowKey.turn(turn.id);
      rows.push({ key, kind: 'turn', id: turn.id });
      rowOf.set(turn.id, key);
    }
  });
  visualsUntil(Number.POSITIVE_INFINITY);

  const indexOf = new Map<string, number>();
  rows.forEach((row, i) => indexOf.set(row.key, i));
  return { rows, rowOf, children, indexOf };
}
