// Times as people read them in lists ("5 min ago", a date further back).
const UNITS: [number, string][] = [[86_400_000, 'day'], [3_600_000, 'hour'], [60_000, 'min']];

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
