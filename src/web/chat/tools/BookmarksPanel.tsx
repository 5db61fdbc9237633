// The chat's bookmarks: each by its name (or its excerpt), to jump to (the thread scrolls there,
// loading older pages if it must), name or rename, and remove. The list is the relay's, whole after
// every change, so what another device changes shows here too.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ChatChannel } from '../../../client/index.ts';
import { CHAT_BOOKMARK_LIMITS, type ChatBookmark } from '../../../contracts/index.ts';
import { focusItem } from '../focus.ts';
import { useAction } from './action.ts';
import { useThread } from './live.ts';

function BookmarkRow({ bookmark, channel, onJump }: { bookmark: ChatBookmark; channel: ChatChannel; onJump(): void }) {
  const action = useAction();
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(bookmark.name ?? '');
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (renaming) field.current?.select();
  }, [renaming]);
  const title = bookmark.name ?? (bookmark.excerpt || 'Untitled');
  const target = { chatId: channel.chatId, itemId: bookmark.itemId };

  const save = async (event: Event) => {
    event.preventDefault();
    const done = await action.run('rename', () => channel.request('chat.renameBookmark', { ...target, name }));
    if (done) setRenaming(false);
  };

  return (
    <li class="bookmark" data-item={bookmark.itemId}>
      {renaming ? (
        <form class="bookmark-rename" onSubmit={save}>
          <input
            ref={field}
            type="text"
            aria-label="Bookmark name"
            maxLength={CHAT_BOOKMARK_LIMITS.name}
            value={name}
            placeholder={bookmark.excerpt}
            onInput={(event) => setName(event.currentTarget.value)}
            onKeyDown={(event) => {
              if (event.key === 'Escape') {
                event.stopPropagation();
                event.preventDefault();
                setRenaming(false);
              }
            }}
          />
          <button type="submit" class="primary" disabled={action.busy !== null}>
            Save
          </button>
          <button type="button" onClick={() => setRenaming(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <>
          <button
            type="button"
            class="bookmark-jump"
            onClick={() => {
              focusItem(bookmark.itemId);
              onJump();
            }}
          >
            <span class="bookmark-name">{title}</span>
            {bookmark.name && bookmark.excerpt ? <span class="bookmark-excerpt">{bookmark.excerpt}</span> : null}
          </button>
          <span class="bookmark-actions" role="group" aria-label={`Bookmark: ${title.slice(0, 60)}`}>
            <button
              type="button"
              class="link"
              onClick={() => {
                setName(bookmark.name ?? '');
                setRenaming(true);
              }}
            >
              {bookmark.name ? 'Rename' : 'Name'}
            </button>
            <button
              type="button"
              class="link"
              disabled={action.busy !== null}
              onClick={() => void action.run('remove', () => channel.request('chat.removeBookmark', target))}
            >
              Remove
            </button>
          </span>
        </>
      )}
      {action.error ? (
        <p class="request-error" role="alert">
          {action.error}
        </p>
      ) : null}
    </li>
  );
}

export function BookmarksPanel({ channel, onJump }: { channel: ChatChannel; onJump(): void }) {
  const thread = useThread(channel, ['bookmarks']);
  const bookmarks = thread.bookmarks;
  return (
    <section class="tool-panel bookmarks-panel" aria-label="Bookmarks">
      {bookmarks.length === 0 ? (
        <p class="muted">No bookmarks yet. Use “Bookmark” on a message to keep your place.</p>
      ) : (
        <ul class="bookmark-list">
          {bookmarks.map((b) => (
            <BookmarkRow key={b.itemId} bookmark={b} channel={channel} onJump={onJump} />
          ))}
        </ul>
      )}
    </section>
  );
}
