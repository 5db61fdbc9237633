// Where the relay may send a push. A subscription's endpoint is a URL a person hands us, and the relay
// POSTs to it on its own later: left open, that makes the relay a fetch proxy to any address (SSRF).
// So an endpoint must be https, on port 443, with no credentials, on a host name (never an IP
// literal) that is one of the browsers' push services or below one, or one the operator added with
// PUSH_ENDPOINT_HOSTS. Only for local use and tests, PUSH_ALLOW_LOOPBACK also admits plain http to
// 127.0.0.1 or localhost. Pushes are sent without following redirects (send.ts), so a push service
// cannot bounce the relay elsewhere either.
import { ProtocolError } from '../../contracts/index.ts';

export interface EndpointPolicySource {
  PUSH_ENDPOINT_HOSTS?: string;
  PUSH_ALLOW_LOOPBACK?: string;
}

/** The push services of Chrome/Edge/Opera/Samsung (FCM), Firefox, Edge on Windows (WNS) and Safari. */
const PUSH_SERVICES = ['fcm.googleapis.com', 'android.googleapis.com', 'push.services.mozilla.com', 'notify.windows.com', 'push.apple.com'];
const LOOPBACK = new Set(['127.0.0.1', 'localhost']);

function listed(env: EndpointPolicySource): string[] {
  const extra = (env.PUSH_ENDPOINT_HOSTS ?? '')
    .split(/[\s,]+/)
    .map((h) => h.trim().toLowerCase().replace(/^\.+/, ''))
    .filter(Boolean);
  return [...PUSH_SERVICES, ...extra];
}

export function loopbackAllowed(env: EndpointPolicySource): boolean {
  return env.PUSH_ALLOW_LOOPBACK === '1' || env.PUSH_ALLOW_LOOPBACK === 'true';
}

/** Throws `bad-request` naming why, unless the relay may send pushes to this endpoint. */
export function checkEndpoint(env: EndpointPolicySource, endpoint: string): void {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new ProtocolError('bad-request', 'endpoint: not a URL');
  }
  if (url.username || url.password) throw new ProtocolError('bad-request', 'endpoint: must not carry credentials');
  const host = url.hostname.toLowerCase();
  if (loopbackAllowed(env) && LOOPBACK.has(host) && (url.protocol === 'http:' || url.protocol === 'https:')) return;
  if (url.protocol !== 'https:') throw new ProtocolError('bad-request', 'endpoint: must be https');
  if (url.port !== '' && url.port !== '443') throw new ProtocolError('bad-request', 'endpoint: must use the https port');
  if (/^[\d.]+$/.test(host) || host.includes(':') || host.startsWith('['))
    throw new ProtocolError('bad-request', 'endpoint: must name a push service, not an address');
  if (!listed(env).some((service) => host === service || host.endsWith(`.${service}`))) {
    throw new ProtocolError('bad-request', `endpoint: ${host} is not a known push service`);
  }
}
