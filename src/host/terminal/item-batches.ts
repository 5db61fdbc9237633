// A terminal session's items, cut into `session.items` events and `session.history` replies that
// fit the link. A transcript read for the first time (a long session the host only now heard of, or
// one resumed after a restart) can hold far more than one frame may carry (LINK_MAX_FRAME_BYTES): the
// outbox refuses such an event outright (`frame-too-large`), and a client would see nothing at all.
// So the items go in batches of at most SESSION_ITEMS_BATCH_BYTES each (the size the link joins
// frames up to), in order; one item larger than a whole batch (a tool that printed megabytes) is cut
// to fit, saying so, and the transcript on the machine keeps it whole.
//
// Each item is serialized once here to be weighed; that is per transcript line, not per client.
import { clipText, type ChatItem } from '../../contracts/index.ts';
import { LINK_BATCH_BYTES, utf8Bytes } from '../../contracts/link.ts';

/** The most one `session.items` batch (or a `session.history` reply) holds, in JSON bytes of its items. */
export const SESSION_ITEMS_BATCH_BYTES = LINK_BATCH_BYTES - 4 * 1024;

/** What a cut item ends with. */
export const CUT_NOTE = "\n… (cut here to fit the link; the whole of it is in the terminal's own transcript)";

interface Weighed {
  item: ChatItem;
  bytes: number;
}

function weigh(item: ChatItem, budget: number): Weighed {
  const bytes = utf8Bytes(JSON.stringify(item));
  if (bytes <= budget) return { item, bytes };
  const smaller = cut(item, bytes - budget);
  return { item: smaller, bytes: utf8Bytes(JSON.stringify(smaller)) };
}

/**
 * The item made `over` bytes smaller, taken from its biggest text (a message's text, a tool's output,
 * or its input, then shown as its cut JSON). A character is at most 6 bytes of JSON (`\uXXXX`) and at
 * least 1, so a cut is weighed again and made once more while it is still over.
 */
function cut(item: ChatItem, over: number): ChatItem {
  let next = item;
  for (let left = over, round = 0; left > 0 && round < 8; round++) {
    const fields: [key: 'text' | 'output' | 'input', text: string][] = [];
    if ('text' in next && typeof next.text === 'string') fields.push(['text', next.text]);
    if (next.kind === 'tool') {
      fields.push(['output', next.output ?? '']);
      if (next.input !== undefined) fields.push(['input', typeof next.input === 'string' ? next.input : JSON.stringify(next.input)]);
    }
    const [key, text] = fields.sort((a, b) => b[1].length - a[1].length)[0] ?? [null, ''];
    if (key === null || text.length === 0) return next;
    const keep = Math.max(0, text.length - left - CUT_NOTE.length);
    next = { ...next, [key]: clipText(text, keep) + CUT_NOTE } as ChatItem;
    left = utf8Bytes(JSON.stringify(next)) - (utf8Bytes(JSON.stringify(item)) - over);
  }
  return next;
}

/** The items in order, in batches whose JSON array is at most `budget` bytes each (a lone item over it cut to fit). */
export function itemBatches(items: readonly ChatItem[], budget = SESSION_ITEMS_BATCH_BYTES): ChatItem[][] {
  const batches: ChatItem[][] = [];
  let batch: ChatItem[] = [];
  let size = 2; // `[` and `]`
  for (const raw of items) {
    const { item, bytes } = weigh(raw, budget - 2);
    if (batch.length > 0 && size + 1 + bytes > budget) {
      batches.push(batch);
      batch = [];
      size = 2;
    }
    size += bytes + (batch.length > 0 ? 1 : 0);
    batch.push(item);
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** The newest items whose JSON array fits `budget` bytes, oldest first (a `session.history` reply). */
export function newestThatFit(items: readonly ChatItem[], budget = SESSION_ITEMS_BATCH_BYTES): ChatItem[] {
  const kept: ChatItem[] = [];
  let size = 2;
  for (let i = items.length - 1; i >= 0; i--) {
    const { item, bytes } = weigh(items[i]!, budget - 2);
    const next = size + bytes + (kept.length > 0 ? 1 : 0);
    if (next > budget) break;
    kept.push(item);
    size = next;
  }
  return kept.reverse();
}
