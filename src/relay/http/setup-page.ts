// The one-time page that claims the relay's owner account: `npm start` prints `/setup#secret=…` (the
// secret in the fragment never reaches a server log); the form posts to `POST /api/auth/setup`. A
// stand-in until the web app has its own page for this.
import { Hono } from 'hono';
import type { Env } from '../env.ts';

export const setupPage = new Hono<{ Bindings: Env }>();

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tether — create the owner account</title>
<style>body{font:16px system-ui,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem}label{display:block;margin:.8rem 0 .2rem}
input{width:100%;padding:.5rem;box-sizing:border-box}button{margin-top:1.2rem;padding:.6rem 1.2rem}#out{margin-top:1rem}</style></head>
<body><h1>Create the owner account</h1>
<p>This relay has no owner yet. The owner manages its people and pairs hosts.</p>
<form id="f"><label for="name">Name</label><input id="name" required maxlength="100" autocomplete="name">
<label for="email">Email</label><input id="email" type="email" required autocomplete="email">
<label for="password">Password (at least 10 characters)</label><input id="password" type="password" required minlength="10" autocomplete="new-password">
<button>Create</button></form><p id="out" role="status"></p>
<script>
const fragment = new URLSearchParams(location.hash.slice(1));
const secret = fragment.get('secret') || '';
// npm start's host waiting for its approval: the code it shows, checked to be one before it is linked.
const pair = /^[2-9A-Z]{4}-[2-9A-Z]{4}$/.test(fragment.get('pair') || '') ? fragment.get('pair') : null;
history.replaceState(null, '', location.pathname);
const out = document.getElementById('out');
if (!secret) out.textContent = 'This link has no setup secret: use the link npm start printed.';
document.getElementById('f').addEventListener('submit', async (e) => {
  e.preventDefault();
  const field = (id) => document.getElementById(id).value;
  const body = { secret, name: field('name'), email: field('email'), password: field('password') };
  const res = await fetch('/api/auth/setup', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = await res.json().catch(() => ({}));
  out.textContent = res.ok ? 'Done. Sign in with this email and password (npm run try: set TETHER_EMAIL and TETHER_PASSWORD).' : (answer.message || 'Failed (' + res.status + ')');
  if (res.ok && pair) {
    // The approval is signed in the app by this browser's device key, which the host then pins as its owner's.
    const next = document.createElement('p');
    const link = document.createElement('a');
    link.href = '/pair?code=' + encodeURIComponent(pair);
    link.textContent = 'Sign in and approve the host on this machine (code ' + pair + ')';
    next.append(link);
    out.after(next);
  }
  if (res.ok) e.target.remove();
});
</script></body></html>`;

setupPage.get('/', (c) => new Response(PAGE, {
  headers: {
    'Content-Type': 'text/html; charset=utf-8',
    // The page's only script is its own; it talks to this relay alone and is never framed.
    'Content-Security-Policy': "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'",
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
  },
}));
