// The runtime's floor for the relay bench: the least a Durable Object on workerd can do to fan one host
// frame out to its attached sockets, with none of the relay (no auth, no validation, no RPC between
// objects, no thread). One object per chat, hibernatable sockets as the relay's ChatRoom has them,
// permessage-deflate offered to clients as the relay's is (compatibility date and flags as wrangler.toml).
// `/host?chat=x&store=1` also writes each event to the object's SQLite before its fan-out, as the room's
// log row is: the output gate then holds the sends until that write is durable. So the bench reads three
// gaps instead of one: Node `ws` → a bare Durable Object (the runtime's socket writes), → one write per
// event (the storage commit), → the relay (everything Tether adds).
import { DurableObject } from 'cloudflare:workers';

interface Env {
  FLOOR: DurableObjectNamespace<FloorRoom>;
}

export class FloorRoom extends DurableObject<Env> {
  private seq = 0;
  private tableMade = false;

  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const pair = new WebSocketPair();
    const tag = url.pathname === '/host' ? (url.searchParams.get('store') === '1' ? 'host-stored' : 'host') : 'client';
    this.ctx.acceptWebSocket(pair[1], [tag]);
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  override webSocketMessage(ws: WebSocket, data: string | ArrayBuffer): void {
    const [tag] = this.ctx.getTags(ws);
    if (tag === 'client' || typeof data !== 'string') return;
    const frame = JSON.parse(data) as { event: string; payload: Record<string, unknown> };
    const seq = ++this.seq;
    const text = JSON.stringify({ type: 'event', event: frame.event, payload: { ...frame.payload, seq } });
    if (tag === 'host-stored') {
      if (!this.tableMade) {
        this.ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS log (seq INTEGER PRIMARY KEY, json TEXT NOT NULL)');
        this.tableMade = true;
      }
      this.ctx.storage.sql.exec('INSERT INTO log (seq, json) VALUES (?, ?)', seq, text);
    }
    for (const client of this.ctx.getWebSockets('client')) client.send(text);
  }
}

export default {
  fetch(request: Request, env: Env): Response | Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === '/api/health') return new Response('ok');
    if (request.headers.get('Upgrade') !== 'websocket') return new Response('a WebSocket only', { status: 426 });
    return env.FLOOR.get(env.FLOOR.idFromName(url.searchParams.get('chat') ?? 'b')).fetch(request);
  },
} satisfies ExportedHandler<Env>;
