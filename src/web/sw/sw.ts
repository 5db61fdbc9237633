// The service worker: the app starts without a network, and push notifications (./push.ts).
//
// The shell: hashed files under /assets/ never change, so they are served from the cache first and
// cached on first use (route chunks too, as pages are visited or warmed). A page navigation asks the
// network first, so a new version arrives as soon as it is deployed, and falls back to the cached
// index.html when the network fails or is too slow to wait for; a fresh copy still lands in the cache.
// When a new index.html names an entry script the cache has not seen, the app changed: the assets no
// longer referenced are dropped, so old versions do not pile up.
//
// The API (/api, /v1, /setup) and other origins are never touched: they are live data, not the shell.
// A module, so this `self` (the service worker's scope) shadows the lib's WorkerGlobalScope one.
import { currentDeviceKey } from '../app/device-key.ts';
import { installPushHandlers } from './push.ts';

declare const self: ServiceWorkerGlobalScope;

const SHELL = 'tether-shell-v1';
const ASSETS = 'tether-assets-v1';
const INDEX = '/index.html';
/** Files of the shell that have no hash in their name: refreshed behind the cached copy. */
const STATIC = ['/manifest.webmanifest', '/icon.svg', '/icon-192.png', '/icon-512.png'];
/** How long a navigation waits for the network before the cached shell answers. */
const NAVIGATION_WAIT_MS = 3_000;

// Answers from a notification are signed with the signed-in person's key, read from IndexedDB.
installPushHandlers(self, { deviceKey: () => currentDeviceKey() });

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const shell = await caches.open(SHELL);
      await shell.addAll(STATIC).catch(() => undefined); // icons are nice to have offline, not required
      // '/' and not '/index.html': the asset server redirects that to '/', and a redirected response
      // cannot answer a navigation.
      const index = await fetch('/', { cache: 'no-cache' });
      if (index.ok) await keepIndex(index);
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      // Caches of an older scheme of this worker.
      for (const name of await caches.keys()) if (name !== SHELL && name !== ASSETS) await caches.delete(name);
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin || /^\/(api|v1|setup)(\/|$)/.test(url.pathname)) return;
  if (url.pathname.startsWith('/assets/')) event.respondWith(cacheFirst(request));
  else if (request.mode === 'navigate') event.respondWith(navigation(request, event));
  else if (STATIC.includes(url.pathname)) event.respondWith(staleWhileRevalidate(request, event));
});

// The page names the assets it loaded before this worker controlled it (the first visit's code, fetched
// around the worker's install): kept too, so the next start works offline whatever page it opens.
self.addEventListener('message', (event) => {
  const data = event.data as { type?: unknown; paths?: unknown } | null;
  if (data?.type !== 'keep-assets' || !Array.isArray(data.paths)) return;
  const paths = data.paths.filter((p): p is string => typeof p === 'string' && /^\/assets\/[\w.-]+$/.test(p));
  event.waitUntil(Promise.all(paths.map((path) => cacheFirst(new Request(path)).catch(() => undefined))));
});

async function cacheFirst(request: Request): Promise<Response> {
  const assets = await caches.open(ASSETS);
  const held = await assets.match(request);
  if (held) return held;
  const response = await fetch(request);
  if (response.ok) await assets.put(request, response.clone());
  return response;
}

async function navigation(request: Request, event: FetchEvent): Promise<Response> {
  const fresh = fetch(request).then(async (response) => {
    // Every app route answers index.html (the Worker's SPA fallback): that is the shell to keep.
    if (response.ok && response.headers.get('content-type')?.includes('text/html')) await keepIndex(response.clone());
    return response;
  });
  event.waitUntil(fresh.catch(() => undefined));
  const cached = caches.open(SHELL).then((shell) => shell.match(INDEX));
  const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), NAVIGATION_WAIT_MS));
  try {
    // The network's answer when it comes in time; the cached shell if the network is slow or down.
    const first = await Promise.race([fresh, timeout]);
    if (first) return first;
    return (await cached) ?? (await fresh);
  } catch (error) {
    const held = await cached;
    if (held) return held;
    throw error;
  }
}

async function staleWhileRevalidate(request: Request, event: FetchEvent): Promise<Response> {
  const shell = await caches.open(SHELL);
  const held = await shell.match(request);
  const fresh = fetch(request).then(async (response) => {
    if (response.ok) await shell.put(request, response.clone());
    return response;
  });
  event.waitUntil(fresh.catch(() => undefined));
  return held ?? fresh;
}

/** Keeps index.html and the files it loads; a new entry script means a new version: old assets go. */
async function keepIndex(response: Response): Promise<void> {
  const html = await response.clone().text();
  const referenced = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);
  const [shell, assets] = await Promise.all([caches.open(SHELL), caches.open(ASSETS)]);
  // A copy without the `redirected` mark, which would make a navigation refuse it.
  await shell.put(INDEX, response.redirected ? new Response(response.body, { status: response.status, headers: response.headers }) : response);
  const missing = [];
  for (const path of referenced) if (!(await assets.match(path))) missing.push(path);
  if (missing.length === 0) return;
  const keep = new Set(referenced.map((path) => new URL(path, self.location.origin).href));
  for (const old of await assets.keys()) if (!keep.has(old.url)) await assets.delete(old);
  await Promise.all(
    missing.map(async (path) => {
      const file = await fetch(path);
      if (file.ok) await assets.put(path, file);
    }),
  );
}
