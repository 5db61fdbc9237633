// Times as people read them in lists ("5 min ago", a date further back).
const UNITS: [number, string][] = [
  [86_400_000, 'day'],
  [3_600_000, 'hour'],
  [60_000, 'min'],
];

export function ago(at: number, now = Date.now()): string {
  const gone = now - at;
  if (gone < 60_000) return 'just now';
  for (const [size, unit] of UNITS) {
    const count = Math.floor(gone / size);
    if (count >= 1) return count > 30 && unit === 'day' ? new Date(at).toLocaleDateString() : `${count} ${unit}${count > 1 && unit !== 'min' ? 's' : ''} ago`;
  }
  return 'just now';
}

export function when(at: number): string {
  return new Date(at).toLocaleString();
}

const DAY = 86_400_000;

/**
 * When a chat was last active, as its list row says it: "just now", "5 min ago", "3 h ago" the same
 * day, "yesterday", else the date (with the year when not this one). `now` is the minute clock's.
 */
export function lastActive(at: number, now: number): string {
  const gone = now - at;
  if (gone < 60_000) return 'just now';
  if (gone < 3_600_000) return `${Math.floor(gone / 60_000)} min ago`;
  const then = new Date(at);
  const today = new Date(now);
  const midnight = new Date(today.getFullYear(), today.getMonth(), today.getDate()).getTime();
  if (at >= midnight) return `${Math.floor(gone / 3_600_000)} h ago`;
  if (at >= midnight - DAY) return 'yesterday';
  return then.toLocaleDateString(undefined, { day: 'numeric', month: 'short', ...(then.getFullYear() === today.getFullYear() ? {} : { year: 'numeric' }) });
}
