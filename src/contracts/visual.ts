import { z } from 'zod';

// Visuals are pages an agent published. They are not chat items, so strict
// thread validators never see them. The limits below are enforced by the host
// at publish time, not by these schemas.
export const VISUAL_LIMITS = {
  title: 200,
  minHeight: 80,
  maxHeight: 2000,
  bytes: 16 * 1024 * 1024,
  heights: 24,
} as const;

// Widths a client measures a page at, in CSS px.
export const VISUAL_MEASURE_WIDTHS = [320, 400, 480, 560, 640, 720, 800, 900, 1000, 1200] as const;

/** `[width, height]` in CSS px. */
export const VisualHeightSchema = z.tuple([z.number().positive(), z.number().nonnegative()]);
export type VisualHeight = z.output<typeof VisualHeightSchema>;

// Absent or `inline` = the reply column; `wide` = the chat pane's width.
export const VisualLayoutSchema = z.enum(['inline', 'wide']);
export type VisualLayout = z.output<typeof VisualLayoutSchema>;

export const ChatVisualSchema = z.object({
  // Also the attachment id of the stored page.
  id: z.string().min(1),
  title: z.string().min(1),
  // Host clock, same as item `createdAt`: places the visual among the items.
  at: z.number(),
  maxHeight: z.number().positive(),
  size: z.int().nonnegative(),
  // Ascending by width; absent = never measured.
  heights: z.array(VisualHeightSchema).optional(),
  turnId: z.string().min(1).optional(),
  layout: VisualLayoutSchema.optional(),
});
export type ChatVisual = z.output<typeof ChatVisualSchema>;

export const ChatVisualsSchema = z.array(ChatVisualSchema);
export type ChatVisuals = z.output<typeof ChatVisualsSchema>;

/**
 * Frame height for a visual shown `width` px wide. Between two measured widths
 * the page's real height is unknown, so it takes the taller neighbour: a frame
 * a little too tall wastes space, one too short clips content. Capped at the
 * visual's own max, then kept within the host's limits. `undefined` when the
 * page was never measured.
 */
export function visualFrameHeight(visual: Pick<ChatVisual, 'heights' | 'maxHeight'>, width: number): number | undefined {
  let below: VisualHeight | undefined;
  let above: VisualHeight | undefined;
  for (const pair of visual.heights ?? []) {
    const [w] = pair;
    if (w <= width && (below === undefined || w > below[0])) below = pair;
    if (w >= width && (above === undefined || w < above[0])) above = pair;
  }
  if (below === undefined && above === undefined) return undefined;
  const tallest = Math.max(below?.[1] ?? 0, above?.[1] ?? 0);
  const capped = Math.ceil(Math.min(tallest, visual.maxHeight));
  return Math.min(VISUAL_LIMITS.maxHeight, Math.max(VISUAL_LIMITS.minHeight, capped));
}
