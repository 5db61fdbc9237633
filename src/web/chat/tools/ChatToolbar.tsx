// The chat's tools: bookmarks, visuals, export, fork.
import type { ChatChannel } from '../../../client/index.ts';

export function ChatToolbar(_props: { channel: ChatChannel; hostId: string }) {
  return <nav class="chat-toolbar" aria-label="Chat tools" />;
}
