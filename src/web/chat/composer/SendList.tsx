// Where each message this person sent from here is on its way: kept in this browser while offline,
// sending, queued by the relay for a host that is offline, or refused (with why, and the way to try
// again). A message is listed in one place only: once delivered it is in the thread or the chat's
// queue, and one the relay keeps for an offline host is in that queue (as `relay:<its request id>`).
import { KEPT_SEND_PREFIX } from '../../../contracts/index.ts';
import type { ChatChannel, DeliveryState, PendingSend } from '../../../client/index.ts';
import { useSends, useThread } from '../tools/live.ts';

const STATE_TEXT: Record<DeliveryState, string> = {
  kept: 'Kept in this browser; sends when you are back online',
  sent: 'Sending…',
  queued: 'Queued for the host; it is offline',
  delivered: 'Delivered', // not listed: the thread or the queue shows it
  failed: 'Not sent',
};

/**
 * Refusals that the same message sent again can never get past: the chat's folder or mode is outside
 * what the host allows now, the chat is gone, the person may not send, the message is malformed. No
 * "Try again" for those; a folder refusal points to a new chat instead (its picker offers only allowed folders).
 */
const FINAL_REFUSALS: ReadonlySet<string> = new Set(['folder-denied', 'mode-denied', 'chat-not-found', 'forbidden', 'bad-request']);

function excerpt(send: PendingSend): string {
  const text = send.payload.text.trim().replace(/\s+/g, ' ');
  const files = send.payload.attachments?.length ?? 0;
  const shown = text.length > 80 ? `${text.slice(0, 79)}…` : text;
  return files > 0 ? `${shown}${shown ? ' ' : ''}(${files} file${files === 1 ? '' : 's'})` : shown;
}

export function SendList({ channel }: { channel: ChatChannel }) {
  const thread = useThread(channel, ['info', 'snapshot']);
  const queued = new Set((thread.info?.queue ?? []).map((message) => message.id));
  const sends = useSends(channel).filter((send) => send.state !== 'delivered' && !queued.has(`${KEPT_SEND_PREFIX}${send.id}`));
  if (sends.length === 0) return null;
  const retry = (send: PendingSend) => {
    const { chatId: _chatId, ...message } = send.payload;
    channel.send(message);
  };
  return (
    <ul class="send-list" aria-label="Your messages on their way" aria-live="polite">
      {sends.map((send) => (
        <li key={send.id} class={`send send-${send.state}`} data-state={send.state}>
          <span class="send-text">{excerpt(send)}</span>
          <span class="send-state">
            {STATE_TEXT[send.state]}
            {send.state === 'failed' && send.error ? `: ${send.error.message}` : ''}
          </span>
          {send.state === 'failed' && !FINAL_REFUSALS.has(send.error?.code ?? '') ? (
            <button type="button" class="link" onClick={() => retry(send)}>
              Try again
            </button>
          ) : null}
          {send.state === 'failed' && send.error?.code === 'folder-denied' ? (
            <a class="link" href="/chats/new">
              Start a new chat in an allowed folder
            </a>
          ) : null}
        </li>
      ))}
    </ul>
  );
}
