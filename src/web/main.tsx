// The web app's entry: draws the shell and registers the service worker (offline shell, push).
import { render } from 'preact';
import { App } from './app/App.tsx';
import './styles.css';

render(<App />, document.getElementById('app')!);

if ('serviceWorker' in navigator && location.protocol !== 'file:') {
  navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch((error: unknown) => {
    console.warn('service worker not registered', error);
  });
}
