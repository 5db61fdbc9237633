// Hooks that redraw a component when the part of a chat it shows changes: the thread (by change kind)
// or the channel's own sends. The thread tells what changed, so a card that shows only the info is not
// redrawn for every streamed delta.
import { useEffect, useReducer } from 'preact/hooks';
import type { ChatChannel, PendingSend, ThreadChange, ThreadModel } from '../../../client/index.ts';

export function useThread(channel: ChatChannel, kinds: ReadonlyArray<ThreadChange['kind']>): ThreadModel {
  const [, redraw] = useReducer((n: number) => n + 1, 0);
  const key = kinds.join();
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` stands for `kinds` (a new array each draw, the same kinds)
  useEffect(
    () =>
      channel.thread.subscribe((change) => {
        if (kinds.includes(change.kind)) redraw(0);
      }),
    [channel, key],
  );
  return channel.thread;
}

/** The channel's sends (kept, on their way, settled), redrawn as each moves on. */
export function useSends(channel: ChatChannel): PendingSend[] {
  const [, redraw] = useReducer((n: number) => n + 1, 0);
  useEffect(() => channel.onSend(() => redraw(0)), [channel]);
  return channel.pendingSends;
}
