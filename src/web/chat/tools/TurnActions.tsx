// What can be done with a turn, at its foot: bookmark its reply, see the changes it made in the folder,
// and fork the chat after it (a settled turn only: a fork takes the history through the whole turn).
import { useState } from 'preact/hooks';
import type { ChatChannel } from '../../../client/index.ts';
import type { ChatItem, ChatTurnItem } from '../../../contracts/index.ts';
import { BookmarkToggle } from './BookmarkToggle.tsx';
import { ForkDialog } from './ForkDialog.tsx';
import { TurnDiffDialog } from './TurnDiffDialog.tsx';
import './tools.css';

/**
 * The turn's last reply of the chat's own (not a subagent's). A turn's item is written when the turn
 * opens, so its replies come after it in the thread, up to the next turn.
 */
function replyOf(channel: ChatChannel, turn: ChatTurnItem): ChatItem | undefined {
  const items = channel.thread.items;
  let reply: ChatItem | undefined;
  for (let i = channel.thread.indexOf(turn.id) ?? 0; i < items.length; i++) {
    const item = items[i]!;
    if (item.kind === 'turn' && item.id !== turn.id) break;
    if (item.turnId === turn.id && item.kind === 'assistant' && !item.parentToolUseId) reply = item;
  }
  return reply;
}

export function TurnActions({ item, channel }: { item: ChatTurnItem; channel: ChatChannel }) {
  const [open, setOpen] = useState<'diff' | 'fork' | null>(null);
  const settled = item.state !== 'running';
  const reply = settled ? replyOf(channel, item) : undefined;
  return (
    <span class="turn-actions" role="group" aria-label="This turn">
      {reply ? <BookmarkToggle item={reply} channel={channel} label="reply" /> : null}
      <button type="button" class="link" onClick={() => setOpen('diff')}>Changes</button>
      {settled ? <button type="button" class="link" onClick={() => setOpen('fork')}>Fork from here</button> : null}
      {open === 'diff' ? <TurnDiffDialog channel={channel} turnId={item.id} onClose={() => setOpen(null)} /> : null}
      {open === 'fork' ? <ForkDialog channel={channel} turnId={item.id} onClose={() => setOpen(null)} /> : null}
    </span>
  );
}
