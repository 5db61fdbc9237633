// A chat id that comes in a path (a chat socket, an attachment, a visual page) is checked against the
// same schema as one in a frame (contracts ChatIdSchema) before anything uses it: it goes on into an
// internal header and a Durable Object's name, where NUL, a newline or a lone surrogate would fail as
// a 500 instead of being refused.
import type { MiddlewareHandler } from 'hono';
import { ChatIdSchema, ProtocolError } from '../../contracts/index.ts';

export const chatIdInPath: MiddlewareHandler = async (c, next) => {
  const chatId = c.req.param('chatId');
  const checked = chatId === undefined ? null : ChatIdSchema.safeParse(chatId);
  if (checked && !checked.success) throw new ProtocolError('bad-request', `chatId: ${checked.error.issues[0]?.message ?? 'not a chat id'}`);
  await next();
};
