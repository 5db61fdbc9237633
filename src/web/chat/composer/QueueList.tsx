// The chat's queue: messages waiting for the running turn to end (the host's queue) or for the host
// to come back (kept by the relay, ids `relay:…`). Each can be taken back to edit (`chat.unqueue`
// hands it back, its text returns to the composer), removed, or sent now (`chat.sendNow`: it starts
// as soon as the running turn stops; not for a host that is away).
import { KEPT_SEND_PREFIX, type ChatQueuedMessage } from '../../../contracts/index.ts';
import type { ChatChannel } from '../../../client/index.ts';
import { useAction } from '../tools/action.ts';
import { useThread } from '../tools/live.ts';

export function QueueList({ channel, onEdit }: { channel: ChatChannel; onEdit(message: ChatQueuedMessage): void }) {
  const thread = useThread(channel, ['info', 'snapshot']);
  const action = useAction();
  const queue = thread.info?.queue ?? [];
  if (queue.length === 0) return null;
  const target = (message: ChatQueuedMessage) => ({ chatId: channel.chatId, messageId: message.id });
  const takeBack = async (message: ChatQueuedMessage, edit: boolean) => {
    const result = await action.run(`unqueue:${message.id}`, () => channel.request('chat.unqueue', target(message)));
    if (result && edit) onEdit(result.message ?? message);
  };
  return (
    <section class="queue" aria-label="Queued messages">
      {/* One line a message: its words cut to fit, its actions beside them. */}
      <h2 class="queue-title">Queued{thread.info?.queuePaused ? ' (paused)' : ''}</h2>
      <ol class="queue-list">
        {queue.map((message) => {
          const label = message.text.trim() || `${message.attachments?.length ?? 0} attachment(s)`;
          const kept = message.id.startsWith(KEPT_SEND_PREFIX);
          return (
            <li key={message.id} class="queued" data-queued={message.id}>
              <span class="queued-text" title={label}>
                {label}
              </span>
              <span class="queued-actions" role="group" aria-label={`Queued message: ${label.slice(0, 60)}`}>
                <button type="button" class="link" disabled={action.busy !== null} onClick={() => void takeBack(message, true)}>
                  Edit
                </button>
                {kept ? null : (
                  <button
                    type="button"
                    class="link"
                    disabled={action.busy !== null}
                    onClick={() => void action.run(`now:${message.id}`, () => channel.request('chat.sendNow', target(message)))}
                  >
                    Send now
                  </button>
                )}
                <button type="button" class="link" disabled={action.busy !== null} onClick={() => void takeBack(message, false)}>
                  Remove
                </button>
              </span>
            </li>
          );
        })}
      </ol>
      {action.error ? (
        <p class="request-error" role="alert">
          {action.error}
        </p>
      ) : null}
    </section>
  );
}
