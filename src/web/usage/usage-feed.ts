// One host's usage as a page shows it: the summary of a period and the plan limits, asked on the
// host's lobby; the page follows the host while it is open (`usage.subscribe`), so `usage.changed`
// (a scan counted more: only the moment, so the period is asked again) and `usage.limitsChanged`
// (the whole snapshot) keep it current; a lobby that reconnects asks both again, since events sent
// while it was down reached nobody.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { UsageLimitsSnapshot, UsageSummaryResult } from '../../contracts/index.ts';
import { errorText } from '../app/errors.ts';
import { hostConnection } from '../app/session.ts';
import { period } from './format.ts';

export interface UsageFeed {
  summary: UsageSummaryResult | null;
  limits: UsageLimitsSnapshot | null;
  error: string | null;
  /** Reads the period again (the host scans what changed first). */
  reload(): void;
  refreshing: boolean;
  /** Asks each CLI that can be asked for its plan's windows again (`usage.refreshLimits`). */
  refreshLimits(): void;
  limitsError: string | null;
}

export function useUsageFeed(hostId: string, days: number): UsageFeed {
  const [summary, setSummary] = useState<UsageSummaryResult | null>(null);
  const [limits, setLimits] = useState<UsageLimitsSnapshot | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [refreshing, setRefreshing] = useState(false);
  const [limitsError, setLimitsError] = useState<string | null>(null);
  const ask = useRef<() => void>(() => undefined);

  useEffect(() => {
    const lobby = hostConnection(hostId);
    const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    let live = true;
    // Answers can cross: only the newest ask's answer is drawn.
    let asked = 0;
    const readSummary = () => {
      const mine = ++asked;
      void lobby.request('usage.summary', { ...period(days, timeZone), resolution: 'day', timeZone }).then(
        (result) => {
          if (live && mine === asked) {
            setSummary(result);
            setError(null);
          }
        },
        (failure: unknown) => {
          if (live && mine === asked) setError(errorText(failure));
        },
      );
    };
    const readLimits = () => {
      void lobby.request('usage.limits', {}).then(
        (result) => {
          if (live) setLimits(result);
        },
        (failure: unknown) => {
          if (live) setLimitsError(errorText(failure));
        },
      );
    };
    ask.current = readSummary;
    setSummary(null);
    readSummary();
    readLimits();
    void lobby.request('usage.subscribe', {}).catch(() => undefined);
    const stops = [
      lobby.onFrame((raw) => {
        const frame = raw as { type?: string; event?: string; payload?: unknown };
        if (frame.type !== 'event') return;
        if (frame.event === 'usage.changed') readSummary();
        else if (frame.event === 'usage.limitsChanged') setLimits(frame.payload as UsageLimitsSnapshot);
      }),
      lobby.onState((state) => {
        if (state === 'open') {
          readSummary();
          readLimits();
        }
      }),
      // A host that came back has forgotten who followed it.
      lobby.onPresence((online) => {
        if (!online) return;
        void lobby.request('usage.subscribe', {}).catch(() => undefined);
        readSummary();
        readLimits();
      }),
    ];
    return () => {
      live = false;
      for (const stop of stops) stop();
      void lobby.request('usage.unsubscribe', {}).catch(() => undefined);
    };
  }, [hostId, days]);

  return {
    summary,
    limits,
    error,
    reload: () => ask.current(),
    refreshing,
    limitsError,
    refreshLimits: () => {
      setRefreshing(true);
      setLimitsError(null);
      void hostConnection(hostId)
        .request('usage.refreshLimits', {})
        .then(
          (result) => setLimits(result),
          (failure: unknown) => setLimitsError(errorText(failure)),
        )
        .finally(() => setRefreshing(false));
    },
  };
}
