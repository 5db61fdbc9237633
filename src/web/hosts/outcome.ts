// The one line under a management form that says how its last action went: an action runs, the page
// reads its data again, and the line says done or why not.
import { useState } from 'preact/hooks';
import { errorText } from '../app/errors.ts';

export type Outcome = { ok: boolean; text: string } | null;

/** `reload` reads the page's data again after each action (called lazily: it may use `failed`). */
export function useOutcome(reload: () => Promise<unknown>) {
  const [message, setMessage] = useState<Outcome>(null);
  const failed = (failure: unknown) => setMessage({ ok: false, text: errorText(failure) });
  const run = async (what: () => Promise<unknown>, done: string) => {
    setMessage(null);
    try {
      await what();
      await reload();
      setMessage({ ok: true, text: done });
    } catch (failure) {
      failed(failure);
    }
  };
  return { message, setMessage, failed, run };
}
