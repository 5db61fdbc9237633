// A visual the agent published: its page drawn in a sandboxed frame from its own route. The frame has
// `sandbox="allow-scripts"` without `allow-same-origin` (and the relay serves the page with a CSP
// sandbox too), so its scripts run in an opaque origin: no cookies, no storage, no reach into this
// app. Its address carries a one-minute ticket for that page only, never the person's token.
//
// Height: what the publisher measured (`heights`, per width; `visualFrameHeight` picks for the
// frame's width), or what the page says itself: it may post `{ tetherVisual: 'height', height }` to
// its parent. Only messages whose source is this frame's window are read, and the height is kept
// within the visual's and the contract's limits.
import { useEffect, useRef, useState } from 'preact/hooks';
import { VISUAL_LIMITS, visualFrameHeight, type ChatVisual } from '../../../contracts/index.ts';
import { api } from '../../app/session.ts';
import { ticketedUrl } from '../ticket-urls.ts';
import './visuals.css';

/** Unmeasured and silent pages start this tall (or their own max, if smaller). */
const UNMEASURED_HEIGHT = 360;

function pageUrl(hostId: string, chatId: string, visualId: string): Promise<string> {
  return ticketedUrl(`visual/${hostId}/${chatId}/${visualId}`, () => api.visualTicket(hostId, chatId, visualId));
}

/** A height a page asked for, if the message is one. */
function askedHeight(data: unknown): number | null {
  if (typeof data !== 'object' || data === null) return null;
  const { tetherVisual, height } = data as { tetherVisual?: unknown; height?: unknown };
  return tetherVisual === 'height' && typeof height === 'number' && Number.isFinite(height) ? height : null;
}

export function clampHeight(visual: ChatVisual, height: number): number {
  const max = Math.min(visual.maxHeight, VISUAL_LIMITS.maxHeight);
  return Math.round(Math.max(VISUAL_LIMITS.minHeight, Math.min(max, height)));
}

export function VisualFrame({ hostId, chatId, visual }: { hostId: string; chatId: string; visual: ChatVisual }) {
  const box = useRef<HTMLElement>(null);
  const frame = useRef<HTMLIFrameElement>(null);
  const [width, setWidth] = useState(0);
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [asked, setAsked] = useState<number | null>(null);

  useEffect(() => {
    let live = true;
    setError(null);
    pageUrl(hostId, chatId, visual.id).then(
      (next) => {
        if (live) setUrl(next);
      },
      (failure: unknown) => {
        if (live) setError(failure instanceof Error ? failure.message : String(failure));
      },
    );
    return () => {
      live = false;
    };
  }, [hostId, chatId, visual.id]);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const observer = new ResizeObserver(([entry]) => setWidth(Math.round(entry!.contentRect.width)));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  useEffect(() => {
    const listen = (event: MessageEvent) => {
      // Only this frame's own page: any other window (another visual, an extension) is not it.
      if (!frame.current || event.source !== frame.current.contentWindow) return;
      const height = askedHeight(event.data);
      if (height !== null) setAsked(clampHeight(visual, height));
    };
    addEventListener('message', listen);
    return () => removeEventListener('message', listen);
  }, [visual]);

  const measured = width > 0 ? visualFrameHeight(visual, width) : undefined;
  const height = asked ?? measured ?? clampHeight(visual, UNMEASURED_HEIGHT);
  return (
    <figure ref={box} class={`visual-frame layout-${visual.layout ?? 'inline'}`} data-visual={visual.id}>
      <figcaption>{visual.title}</figcaption>
      {error ? (
        <p class="request-error" role="alert">
          The visual did not load: {error}
        </p>
      ) : (
        <iframe
          ref={frame}
          title={visual.title}
          src={url ?? undefined}
          sandbox="allow-scripts"
          referrerpolicy="no-referrer"
          loading="lazy"
          style={{ height: `${height}px` }}
        />
      )}
    </figure>
  );
}
