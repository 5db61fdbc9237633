import { Hono } from 'hono';
import { probeDatabase } from '../db/health.ts';
import type { Env } from '../env.ts';

export const health = new Hono<{ Bindings: Env }>();

health.get('/', async (c) => {
  try {
    await probeDatabase(c.env.DB);
    return c.json({ ok: true, db: 'ok' });
  } catch {
    return c.json({ ok: false, db: 'unreachable' }, 503);
  }
});
