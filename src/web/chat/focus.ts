// Which item the open thread should bring into view and highlight. Anything may set it (a bookmark, a
// link to an item); the thread scrolls there (loading older pages when the item is not loaded yet),
// highlights it, moves keyboard focus to it, and sets this back to null, so the same item can be
// asked for again.
import { signal } from '@preact/signals';

export const focusedItem = signal<string | null>(null);

/** Brings the item with this id into view in the open thread. */
export function focusItem(id: string): void {
  focusedItem.value = id;
}
