// The app's routes: a URL signal and a table of patterns. Pages load on first visit (dynamic import),
// so the first load ships only the shell. Links are plain <a href> the router catches; history
// back/forward updates the signal.
import { signal } from '@preact/signals';
import type { ComponentType } from 'preact';

/** The current path and query (no origin). */
export const currentUrl = signal(location.pathname + location.search);

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === currentUrl.value) return;
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  currentUrl.value = location.pathname + location.search;
  window.scrollTo(0, 0);
}

addEventListener('popstate', () => {
  currentUrl.value = location.pathname + location.search;
});

// Same-origin links the app routes itself; new-tab clicks, downloads and other origins go to the browser.
document.addEventListener('click', (event) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const link = (event.target as Element | null)?.closest?.('a[href]') as HTMLAnchorElement | null;
  if (!link || link.target || link.hasAttribute('download') || link.origin !== location.origin) return;
  if (/^\/(api|v1|setup)(\/|$)/.test(link.pathname)) return;
  event.preventDefault();
  navigate(link.pathname + link.search);
});

/** A page of the app: each takes its own props, which the route's params fill. */
// biome-ignore lint/suspicious/noExplicitAny: a route holds pages of every props type; each page checks its own
export type Page = ComponentType<any>;
type Loader = () => Promise<Page>;

export interface Route {
  /** `/hosts/:hostId` style: `:name` matches one path segment. */
  pattern: string;
  load: Loader;
  /** Reachable signed out (sign-in, invitations). */
  open?: boolean;
  /** Which section of the nav it belongs to. */
  section: 'chats' | 'hosts' | 'teams' | 'usage' | 'settings' | 'none';
}

export interface Match {
  route: Route;
  params: Record<string, string>;
  query: URLSearchParams;
}

export function match(routes: readonly Route[], url: string): Match | null {
  const [pathname, search = ''] = url.split('?');
  const parts = pathname.split('/').filter(Boolean);
  for (const route of routes) {
    const pattern = route.pattern.split('/').filter(Boolean);
    if (pattern.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const fits = pattern.every((segment, i) => {
      if (segment.startsWith(':')) return ((params[segment.slice(1)] = decodeURIComponent(parts[i])), true);
      return segment === parts[i];
    });
    if (fits) return { route, params, query: new URLSearchParams(search) };
  }
  return null;
}
