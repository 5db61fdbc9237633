// The web app's entry: draws the shell and registers the service worker (offline shell, push).
import { render } from 'preact';
import { App } from './app/App.tsx';
import './app/install.ts';
import { warmRoutes } from './app/routes.ts';
import './styles.css';

render(<App />, document.getElementById('app')!);

const worker = 'serviceWorker' in navigator && location.protocol !== 'file:';
if (worker) {
  navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch((error: unknown) => {
    console.warn('service worker not registered', error);
  });
}

/** Tells the service worker every asset this page loaded, so it keeps those fetched before it ran. */
async function keepAssets(): Promise<void> {
  const registration = await navigator.serviceWorker.ready;
  const paths = performance
    .getEntriesByType('resource')
    .map((entry) => new URL(entry.name))
    .filter((url) => url.origin === location.origin && url.pathname.startsWith('/assets/'))
    .map((url) => url.pathname);
  registration.active?.postMessage({ type: 'keep-assets', paths });
}

// Once the first page is up and the browser is idle, fetch the other pages' code (the service worker
// keeps it), so moving around is instant and works offline. Not on a metered "save data" connection.
const saveData = (navigator as { connection?: { saveData?: boolean } }).connection?.saveData === true;
if (!saveData) {
  const idle = (globalThis as { requestIdleCallback?: (run: () => void) => void }).requestIdleCallback ?? ((run: () => void) => setTimeout(run, 2_000));
  addEventListener('load', () => idle(() => void warmRoutes().then(() => (worker ? keepAssets() : undefined))), { once: true });
} else if (worker) {
  addEventListener('load', () => void keepAssets(), { once: true });
}
