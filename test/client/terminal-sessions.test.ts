// A client's fold of a terminal session's `session.items`: in the order things happened, so a prompt
// whose transcript line the CLI wrote late (Claude Code does under load) still shows before its reply.
import { describe, expect, it } from 'vitest';
import { TerminalSessionsView } from '../../src/client/terminal-sessions.ts';
import type { ChatItem } from '../../src/contracts/index.ts';

const sessionId = '3f0c8a52-5d1e-4a8b-9b7e-0a4c2f1d6e21';
const user = (id: string, createdAt: number, text: string): ChatItem => ({ kind: 'user', id, createdAt, turnId: null, text });
const assistant = (id: string, createdAt: number, text: string): ChatItem => ({
  kind: 'assistant',
  id,
  createdAt,
  turnId: null,
  text,
  streaming: false,
  parentToolUseId: null,
});

describe('terminal session items as a client holds them', () => {
  it('places an item that came late by when it happened, and an update keeps its place', () => {
    const view = new TerminalSessionsView();
    view.take({ event: 'session.items', payload: { sessionId, items: [assistant('a1', 200, 'Hello!')] } } as never);
    view.take({ event: 'session.items', payload: { sessionId, items: [user('u1', 100, 'KW-HELLO')] } } as never);
    view.take({ event: 'session.items', payload: { sessionId, items: [user('u2', 300, 'KW-NEXT'), assistant('a1', 200, 'Hello again!')] } } as never);
    expect(view.itemsOf(sessionId).map((i) => `${i.id}:${(i as { text: string }).text}`)).toEqual(['u1:KW-HELLO', 'a1:Hello again!', 'u2:KW-NEXT']);
  });
});
