// The terminal sessions the host keeps listing (kept.ts): bounded, and never what still runs, waits or
// can be continued. Through the real TerminalSessions, loading the file a long-running host left.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SESSIONS_KEPT, STATUS_ONLY_KEPT_MS, sessionsToDrop } from '../../src/host/terminal/kept.ts';
import { TerminalSessions } from '../../src/host/terminal/sessions.ts';

const NOW = Date.UTC(2026, 11, 6, 12);

function agent(patch: Record<string, unknown>) {
  return { kind: 'claude' as const, agentSessionId: 'x', transcriptPath: '/t.jsonl', status: 'idle' as const, live: false, updatedAt: NOW, ...patch };
}

describe('which terminal sessions are dropped', () => {
  it('a status-only session a day after it exited, one whose transcript is gone; never a live one or one waited on', () => {
    const sessions = [
      { sessionId: 'gemini-old', agent: agent({ transcriptPath: null, status: 'exited', updatedAt: NOW - STATUS_ONLY_KEPT_MS - 1 }) },
      { sessionId: 'gemini-recent', agent: agent({ transcriptPath: null, status: 'exited', updatedAt: NOW - 60_000 }) },
      { sessionId: 'gemini-running', agent: agent({ transcriptPath: null, status: 'running', live: true, updatedAt: 0 }) },
      { sessionId: 'claude-gone', agent: agent({ transcriptPath: '/gone.jsonl' }) },
      { sessionId: 'claude-there', agent: agent({ transcriptPath: '/there.jsonl', updatedAt: 0 }) },
      { sessionId: 'claude-live', agent: agent({ transcriptPath: '/gone-too.jsonl', live: true, status: 'running' }) },
      { sessionId: 'claude-asks', agent: agent({ transcriptPath: '/gone-three.jsonl', status: 'needs-you' }) },
    ];
    const drop = sessionsToDrop(sessions, NOW, { transcriptExists: (file) => file === '/there.jsonl', busy: (id) => id === 'claude-asks' });
    expect([...drop].sort()).toEqual(['claude-gone', 'gemini-old']);
  });

  it('beyond the newest kept, the least recently active go, live ones aside', () => {
    const sessions = Array.from({ length: SESSIONS_KEPT + 10 }, (_, i) => ({
      sessionId: `s${i}`,
      agent: agent({ updatedAt: NOW - i * 1000, live: i >= SESSIONS_KEPT + 5, status: 'running' }),
    }));
    const drop = sessionsToDrop(sessions, NOW, { transcriptExists: () => true });
    // The 10 oldest are s200..s209; s205..s209 run, so the next oldest idle ones (s195..s199) go instead.
    expect([...drop].sort()).toEqual(['s195', 's196', 's197', 's198', 's199', 's200', 's201', 's202', 's203', 's204'].sort());
  });
});

describe('a host that kept its list for months', () => {
  let sessions: TerminalSessions | null = null;
  afterEach(async () => {
    await sessions?.close();
    sessions = null;
  });

  it('starts listing the newest it can still show, and writes the shorter list back', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'tether-kept-data-'));
    const configDir = mkdtempSync(path.join(tmpdir(), 'tether-kept-claude-'));
    const projects = path.join(configDir, 'projects', '-work');
    mkdirSync(projects, { recursive: true });
    const now = Date.now();
    const stored = [];
    for (let i = 0; i < SESSIONS_KEPT + 50; i++) {
      const id = `aaaa-${i}`;
      const transcript = path.join(projects, `${id}.jsonl`);
      // Every tenth transcript was deleted by the person; the rest are there.
      if (i % 10 !== 3) writeFileSync(transcript, '');
      stored.push({
        sessionId: id,
        cwd: '/work',
        agent: { kind: 'claude', agentSessionId: id, transcriptPath: transcript, status: 'idle', live: false, updatedAt: now - i * 1000 },
      });
    }
    stored.push({
      sessionId: 'gemini-1-2',
      cwd: '/work',
      agent: { kind: 'gemini', agentSessionId: 'gemini-1-2', transcriptPath: null, status: 'exited', live: false, updatedAt: now - STATUS_ONLY_KEPT_MS - 5000 },
    });
    writeFileSync(path.join(dataDir, 'terminal-sessions.json'), JSON.stringify({ sessions: stored }));
    const infos: string[] = [];
    sessions = new TerminalSessions({
      dataDir,
      targets: () => [{ kind: 'claude', configDir }],
      broadcast: () => undefined,
      log: { info: (m) => infos.push(m), warn: () => undefined },
    });
    const listed = sessions.list().sessions.map((s) => s.sessionId);
    const expected = stored
      .slice(0, SESSIONS_KEPT + 50)
      .filter((_, i) => i % 10 !== 3)
      .slice(0, SESSIONS_KEPT)
      .map((s) => s.sessionId);
    expect(listed).toHaveLength(SESSIONS_KEPT);
    expect(new Set(listed)).toEqual(new Set(expected));
    expect(infos.some((m) => /\d+ no longer listed/.test(m))).toBe(true);
    await sessions.close();
    sessions = null;
    const written = JSON.parse(readFileSync(path.join(dataDir, 'terminal-sessions.json'), 'utf8')) as { sessions: { sessionId: string }[] };
    expect(new Set(written.sessions.map((s) => s.sessionId))).toEqual(new Set(expected));
  });
});
