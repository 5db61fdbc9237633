// What can be done with a turn, in one menu at its foot (a phone has no room for a row of links under
// every reply): bookmark its reply or remove the bookmark, see the changes it made in the folder (only
// where there is something to compare: the folder is a git repository, so the turn has a checkpoint),
// and fork the chat after it (a settled turn only: a fork takes the history through the whole turn).
import { useState } from 'preact/hooks';
import type { ChatChannel } from '../../../client/index.ts';
import type { ChatItem, ChatTurnItem } from '../../../contracts/index.ts';
import { Icon } from '../../app/icons.tsx';
import { useAction } from './action.ts';
import { bookmarkable } from './BookmarkToggle.tsx';
import { ForkDialog } from './ForkDialog.tsx';
import { useThread } from './live.ts';
import { Menu, type MenuItem } from './Menu.tsx';
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
  const thread = useThread(channel, ['bookmarks']);
  const bookmark = useAction();
  const [open, setOpen] = useState<'diff' | 'fork' | null>(null);
  const settled = item.state !== 'running';
  const reply = settled ? replyOf(channel, item) : undefined;
  const marked = reply !== undefined && thread.bookmarks.some((b) => b.itemId === reply.id);

  const items: MenuItem[] = [];
  if (reply && bookmarkable(reply)) {
    const target = { chatId: channel.chatId, itemId: reply.id };
    items.push(
      marked
        ? { label: 'Remove the bookmark', onSelect: () => void bookmark.run('bookmark', () => channel.request('chat.removeBookmark', target)) }
        : { label: 'Bookmark the reply', onSelect: () => void bookmark.run('bookmark', () => channel.request('chat.addBookmark', target)) },
    );
  }
  if (item.checkpoint) items.push({ label: 'Changes in this turn', onSelect: () => setOpen('diff') });
  if (settled) items.push({ label: 'Fork from here', onSelect: () => setOpen('fork') });
  if (items.length === 0) return null;

  return (
    <span class="turn-actions">
      {marked ? (
        <span class="bookmark-mark" title="Bookmarked">
          <Icon name="starFilled" />
          <span class="visually-hidden">Bookmarked</span>
        </span>
      ) : null}
      <Menu label="Reply actions" items={items} class="link turn-menu">
        <Icon name="more" />
      </Menu>
      {bookmark.error ? (
        <span class="request-error" role="alert">
          {bookmark.error}
        </span>
      ) : null}
      {open === 'diff' ? <TurnDiffDialog channel={channel} turnId={item.id} onClose={() => setOpen(null)} /> : null}
      {open === 'fork' ? <ForkDialog channel={channel} turnId={item.id} onClose={() => setOpen(null)} /> : null}
    </span>
  );
}
