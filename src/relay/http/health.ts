import { Hono } from 'hono';
import type { Env } from '../env.ts';

export const health = new Hono<{ Bindings: Env }>();

health.get('/', async (c) => {
  try {
    await c.env.DB.prepare('SELECT 1').first();
    return c.json({ ok: true, db: 'ok' });
  } catch {
    return c.json({ ok: false, db: 'unreachable' }, 503);
  }
});
