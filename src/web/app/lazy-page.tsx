// Draws a page that loads on first visit. Loaded pages are kept, so coming back draws at once.
import { useEffect, useState } from 'preact/hooks';
import type { Page } from './router.ts';

const loaded = new Map<() => Promise<Page>, Page>();

export function LazyPage({ load, props }: { load: () => Promise<Page>; props: Record<string, unknown> }) {
  const [page, setPage] = useState<Page | null>(() => loaded.get(load) ?? null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    const known = loaded.get(load);
    if (known) return void setPage(() => known);
    let live = true;
    setPage(null);
    setFailed(null);
    load().then(
      (next) => {
        loaded.set(load, next);
        if (live) setPage(() => next);
      },
      // Offline with a page never loaded before: say so instead of a blank screen.
      (error: unknown) => {
        if (live) setFailed(error instanceof Error ? error.message : String(error));
      },
    );
    return () => {
      live = false;
    };
  }, [load]);
  if (failed)
    return (
      <p class="notice error" role="alert">
        This page could not load ({failed}). Check the connection and try again.
      </p>
    );
  if (!page)
    return (
      <p class="loading" aria-busy="true">
        Loading…
      </p>
    );
  const Loaded = page;
  return <Loaded {...props} />;
}
