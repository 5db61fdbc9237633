// The publish rules for visuals (agent-contracts §12), enforced by the host when an agent publishes a
// page: they are not in the schemas. A broken rule is `visual-invalid` or `visual-too-large`, with a
// message that tells the agent what to change.
//
// Tether adds one rule of its own: the page travels to the relay as one `visual.page` frame, so a page
// whose escaped JSON would not fit the link is too large even under the 16 MiB the protocol allows.
import { ProtocolError } from '../../contracts/errors.ts';
import { VISUAL_LIMITS } from '../../contracts/index.ts';
import type { ChatVisual } from '../../contracts/index.ts';
import { LINK_MAX_FRAME_BYTES } from '../../contracts/link.ts';

/** What an agent publishes; anything may be wrong with it. */
export interface VisualInput {
  title: string;
  html: string;
  maxHeight?: number;
  heights?: ReadonlyArray<readonly [number, number]>;
  layout?: string;
  turnId?: string;
}

/** Room left in a `visual.page` frame for everything but the page (type, names, chat and visual ids, `n`). */
const PAGE_FRAME_OVERHEAD = 16 * 1024;

/** The list entry for `input` under `id`, published at `at`; throws when a rule is broken. */
export function admitVisual(input: VisualInput, id: string, at: number): ChatVisual {
  const title = typeof input.title === 'string' ? input.title.trim() : '';
  if (title === '') throw invalid('A visual needs a title');
  if (title.length > VISUAL_LIMITS.title) throw invalid(`A visual title has at most ${VISUAL_LIMITS.title} characters`);
  if (typeof input.html !== 'string' || input.html.trim() === '') throw invalid('A visual needs an HTML page');
  const maxHeight = input.maxHeight ?? VISUAL_LIMITS.maxHeight;
  if (!Number.isFinite(maxHeight) || maxHeight < VISUAL_LIMITS.minHeight || maxHeight > VISUAL_LIMITS.maxHeight) {
    throw invalid(`maxHeight must be between ${VISUAL_LIMITS.minHeight} and ${VISUAL_LIMITS.maxHeight}`);
  }
  if (input.layout !== undefined && input.layout !== 'inline' && input.layout !== 'wide') throw invalid('layout is inline or wide');
  const heights = input.heights === undefined ? undefined : measuredHeights(input.heights);
  const size = Buffer.byteLength(input.html);
  if (size > VISUAL_LIMITS.bytes) throw new ProtocolError('visual-too-large', `A visual page has at most ${VISUAL_LIMITS.bytes} bytes`);
  if (Buffer.byteLength(JSON.stringify(input.html)) > LINK_MAX_FRAME_BYTES - PAGE_FRAME_OVERHEAD) {
    throw new ProtocolError(
      'visual-too-large',
      'This page is too large to send once escaped (quotes, backslashes and control characters count double or more); make it smaller',
    );
  }
  return {
    id,
    title,
    at,
    maxHeight: Math.round(maxHeight),
    size,
    ...(heights ? { heights } : {}),
    ...(input.layout ? { layout: input.layout } : {}),
    ...(input.turnId ? { turnId: input.turnId } : {}),
  };
}

/** At most VISUAL_LIMITS.heights pairs, one per width (the last wins; width rounded, at least 1; height ceiled), ascending. */
function measuredHeights(pairs: unknown): Array<[number, number]> {
  if (!Array.isArray(pairs)) throw invalid('heights is a list of [width, height] pairs');
  if (pairs.length > VISUAL_LIMITS.heights) throw invalid(`At most ${VISUAL_LIMITS.heights} measured heights`);
  const byWidth = new Map<number, number>();
  for (const pair of pairs as unknown[]) {
    const [width, height] = Array.isArray(pair) ? (pair as unknown[]) : [];
    if (typeof width !== 'number' || typeof height !== 'number' || !Number.isFinite(width) || width <= 0 || !Number.isFinite(height) || height < 0) {
      throw invalid('Each height is [width > 0, height >= 0]');
    }
    byWidth.set(Math.max(1, Math.round(width)), Math.ceil(height));
  }
  return [...byWidth].sort((a, b) => a[0] - b[0]);
}

function invalid(message: string): ProtocolError {
  return new ProtocolError('visual-invalid', message);
}
