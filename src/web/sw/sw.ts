// The service worker: keeps the app's shell for offline starts. (Skeleton; the web-shell engineer
// fills it in and wires the push handlers from ./push.ts.)
// A module, so this `self` (the service worker's scope) shadows the lib's WorkerGlobalScope one.
export {};
declare const self: ServiceWorkerGlobalScope;

self.addEventListener('install', () => void self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
