// One request a control runs at a time: which is in flight (to disable the controls and say so) and
// the last refusal's message (shown where the control is). The relay's `{code, message}` arrives as a
// ProtocolError; its message is written for people.
import { useCallback, useRef, useState } from 'preact/hooks';

export interface Action {
  /** The name of the request in flight, or null. */
  busy: string | null;
  error: string | null;
  run<T>(name: string, work: () => Promise<T>): Promise<T | undefined>;
  clearError(): void;
}

export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

export function useAction(): Action {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const alive = useRef(true);
  alive.current = true;
  const run = useCallback(async <T>(name: string, work: () => Promise<T>): Promise<T | undefined> => {
    setBusy(name);
    setError(null);
    try {
      return await work();
    } catch (failure) {
      if (alive.current) setError(errorText(failure));
      return undefined;
    } finally {
      if (alive.current) setBusy(null);
    }
  }, []);
  const clearError = useCallback(() => setError(null), []);
  return { busy, error, run, clearError };
}
