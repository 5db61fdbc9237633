// The web app's entry: draws the shell and registers the service worker (offline shell, push).
import { render } from 'preact';
import { App } from './app/App.tsx';
import './app/install.ts';
import { warmRoutes } from './app/routes.ts';
import './styles.css';

render(<App />, document.getElementById('app')!);

if ('serviceWorker' in navigator && location.protocol !== 'file:') {
  navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch((error: unknown) => {
    console.warn('service worker not registered', error);
  });
}

// Once the first page is up and the browser is idle, fetch the other pages' code (the service worker
// keeps it), so moving around is instant and works offline. Not on a metered "save data" connection.
const saveData = (navigator as { connection?: { saveData?: boolean } }).connection?.saveData === true;
if (!saveData) {
  const idle = (globalThis as { requestIdleCallback?: (run: () => void) => void }).requestIdleCallback ?? ((run: () => void) => setTimeout(run, 2_000));
  addEventListener('load', () => idle(warmRoutes), { once: true });
}
