import { describe, expect, it } from 'vitest';
import { ChatVisualSchema, VISUAL_LIMITS, VISUAL_MEASURE_WIDTHS, visualFrameHeight, VisualHeightSchema } from '../../src/contracts/visual.ts';
import type { VisualHeight } from '../../src/contracts/visual.ts';

const visual = (heights: VisualHeight[] | undefined, maxHeight = 2000) => ({ heights, maxHeight });

describe('visualFrameHeight', () => {
  const measured: VisualHeight[] = [
    [320, 900],
    [640, 500],
    [1000, 420],
  ];

  it.each([
    [640, 500],
    [480, 900],
    [800, 500],
    [280, 900],
    [1400, 420],
  ])('at %i px wide answers %i (documented examples)', (width, height) => {
    expect(visualFrameHeight(visual(measured), width)).toBe(height);
  });

  it('caps at the visual’s own maxHeight', () => {
    expect(visualFrameHeight(visual(measured, 600), 320)).toBe(600);
  });

  it('keeps the result within 80..2000 and rounds up', () => {
    expect(visualFrameHeight(visual([[640, 12]]), 640)).toBe(80);
    expect(visualFrameHeight(visual([[640, 300.2]]), 640)).toBe(301);
    expect(visualFrameHeight(visual([[640, 5000]], 9000), 640)).toBe(2000);
  });

  it('answers undefined for a page never measured', () => {
    expect(visualFrameHeight(visual(undefined), 640)).toBeUndefined();
    expect(visualFrameHeight(visual([]), 640)).toBeUndefined();
  });
});

describe('ChatVisual', () => {
  const record = { id: 'v1', title: 'Chart', at: 1, maxHeight: 2000, size: 1024 };

  it('parses an unmeasured record and a measured wide one', () => {
    expect(ChatVisualSchema.safeParse(record).success).toBe(true);
    expect(ChatVisualSchema.safeParse({ ...record, heights: [[320, 0]], layout: 'wide', turnId: 't' }).success).toBe(true);
  });

  it('refuses near misses', () => {
    expect(ChatVisualSchema.safeParse({ ...record, title: '' }).success).toBe(false);
    expect(ChatVisualSchema.safeParse({ ...record, maxHeight: 0 }).success).toBe(false);
    expect(ChatVisualSchema.safeParse({ ...record, layout: 'full' }).success).toBe(false);
    expect(ChatVisualSchema.safeParse({ ...record, turnId: '' }).success).toBe(false);
    expect(VisualHeightSchema.safeParse([0, 10]).success).toBe(false);
    expect(VisualHeightSchema.safeParse([10, -1]).success).toBe(false);
    expect(VisualHeightSchema.safeParse([10]).success).toBe(false);
  });

  it('leaves publish limits to the host: a title over 200 still parses', () => {
    expect(ChatVisualSchema.safeParse({ ...record, title: 'x'.repeat(VISUAL_LIMITS.title + 1) }).success).toBe(true);
  });

  it('measures at the documented widths', () => {
    expect(VISUAL_MEASURE_WIDTHS).toEqual([320, 400, 480, 560, 640, 720, 800, 900, 1000, 1200]);
    expect(VISUAL_LIMITS).toEqual({ title: 200, minHeight: 80, maxHeight: 2000, bytes: 16_777_216, heights: 24 });
  });
});
