// Where each message this person sent from here is on its way: kept in this browser while offline,
// sending, queued by the relay for a host that is offline, delivered, or refused (with why, and the
// way to try again).
import type { ChatChannel, DeliveryState, PendingSend } from '../../../client/index.ts';
import { useSends } from '../tools/live.ts';

const STATE_TEXT: Record<DeliveryState, string> = {
  kept: 'Kept in this browser; sends when you are back online',
  sent: 'Sending…',
  queued: 'Queued for the host; it is offline',
  delivered: 'Delivered',
  failed: 'Not sent',
};

function excerpt(send: PendingSend): string {
  const text = send.payload.text.trim().replace(/\s+/g, ' ');
  const files = send.payload.attachments?.length ?? 0;
  const shown = text.length > 80 ? `${text.slice(0, 79)}…` : text;
  return files > 0 ? `${shown}${shown ? ' ' : ''}(${files} file${files === 1 ? '' : 's'})` : shown;
}

export function SendList({ channel }: { channel: ChatChannel }) {
  const sends = useSends(channel);
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
            {STATE_TEXT[send.state]}{send.state === 'failed' && send.error ? `: ${send.error.message}` : ''}
          </span>
          {send.state === 'failed' ? <button type="button" class="link" onClick={() => retry(send)}>Try again</button> : null}
        </li>
      ))}
    </ul>
  );
}
