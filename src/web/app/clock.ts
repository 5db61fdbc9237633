// The time the app's relative times ("5 min ago") are read against: one signal, moved on each new
// minute while something shows it. Only what reads it re-renders as time passes (a list's time
// labels, not the list), and nothing ticks while no such label is on screen.
import { signal } from '@preact/signals';

const MINUTE = 60_000;
let timer: ReturnType<typeof setTimeout> | null = null;

/** Now, to the minute: read `.value` in a component to have it re-rendered on each new minute. */
export const minuteNow = signal(Date.now(), {
  watched() {
    const tick = (): void => {
      minuteNow.value = Date.now();
      // On the next minute boundary, so every label moves at once and none lags by up to a minute.
      timer = setTimeout(tick, MINUTE - (Date.now() % MINUTE));
    };
    tick();
  },
  unwatched() {
    if (timer) clearTimeout(timer);
    timer = null;
  },
});
