// Bookmarks a message (a person's message or a reply of the chat's own, the items the relay lets be
// marked), or removes the bookmark it has. Mounted on such items; the bookmarks panel names them.
import type { ChatChannel } from '../../../client/index.ts';
import type { ChatItem } from '../../../contracts/index.ts';
import { Icon } from '../../app/icons.tsx';
import { useAction } from './action.ts';
import { useThread } from './live.ts';

/** Whether the relay takes a bookmark on this item. */
export function bookmarkable(item: ChatItem): boolean {
  return item.kind === 'user' || (item.kind === 'assistant' && !item.parentToolUseId);
}

export function BookmarkToggle({ item, channel, label = 'message' }: { item: ChatItem; channel: ChatChannel; label?: string }) {
  const thread = useThread(channel, ['bookmarks']);
  const action = useAction();
  if (!bookmarkable(item)) return null;
  const marked = thread.bookmarks.some((b) => b.itemId === item.id);
  const target = { chatId: channel.chatId, itemId: item.id };
  const toggle = () =>
    void action.run('bookmark', () => (marked ? channel.request('chat.removeBookmark', target) : channel.request('chat.addBookmark', target)));
  return (
    <>
      <button
        type="button"
        class={`link bookmark-toggle${marked ? ' marked' : ''}`}
        aria-pressed={marked}
        aria-label={marked ? `Remove the bookmark on this ${label}` : `Bookmark this ${label}`}
        disabled={action.busy !== null}
        onClick={toggle}
      >
        <Icon name={marked ? 'starFilled' : 'star'} /> {marked ? 'Bookmarked' : 'Bookmark'}
      </button>
      {action.error ? (
        <span class="request-error" role="alert">
          {action.error}
        </span>
      ) : null}
    </>
  );
}
