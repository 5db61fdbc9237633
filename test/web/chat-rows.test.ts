// What a chat list row says of a chat (src/web/chats/ChatList.tsx): when it was last active, read
// against the minute clock, and its folder shortened for a phone.
import { describe, expect, it } from 'vitest';
import { shortFolder } from '../../src/client/chat-title.ts';
import { lastActive } from '../../src/web/hosts/time.ts';

const MIN = 60_000;

describe('a row says when the chat was last active', () => {
  const now = new Date(2026, 11, 3, 15, 30).getTime();

  it('in minutes and hours the same day, "yesterday" the day before, a date further back', () => {
    expect(lastActive(now - 20_000, now)).toBe('just now');
    expect(lastActive(now + 5 * MIN, now), 'a host clock ahead of this one').toBe('just now');
    expect(lastActive(now - MIN, now)).toBe('1 min ago');
    expect(lastActive(now - 59 * MIN, now)).toBe('59 min ago');
    expect(lastActive(now - 3 * 60 * MIN, now)).toBe('3 h ago');
    expect(lastActive(new Date(2026, 11, 3, 0, 5).getTime(), now)).toBe('15 h ago');
    expect(lastActive(new Date(2026, 11, 2, 23, 50).getTime(), now)).toBe('yesterday');
    expect(lastActive(new Date(2026, 11, 2, 0, 0).getTime(), now)).toBe('yesterday');
    const older = new Date(2026, 10, 28, 9, 0);
    expect(lastActive(older.getTime(), now)).toBe(older.toLocaleDateString(undefined, { day: 'numeric', month: 'short' }));
    const lastYear = new Date(2025, 5, 1);
    expect(lastActive(lastYear.getTime(), now)).toBe(lastYear.toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric' }));
  });

  it('moves on as the clock does, with nothing else changed', () => {
    const at = now - 30_000;
    expect([0, 1, 2, 61].map((minutes) => lastActive(at, now + minutes * MIN))).toEqual(['just now', '1 min ago', '2 min ago', '1 h ago']);
  });
});

describe("a row's folder", () => {
  it('is its last two names, or the whole path when that is no longer', () => {
    expect(shortFolder('/home/ana/projects/tether')).toBe('projects/tether');
    expect(shortFolder('/home/ana/projects/tether/')).toBe('projects/tether');
    expect(shortFolder('C:\\Users\\ana\\code\\app')).toBe('code/app');
    expect(shortFolder('/srv/app')).toBe('/srv/app');
    expect(shortFolder('/')).toBe('/');
  });
});
