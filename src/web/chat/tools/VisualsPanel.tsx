// The visuals the agent published in this chat: each opened large in a dialog (drawn in its sandboxed
// frame) or removed.
import { useState } from 'preact/hooks';
import type { ChatChannel } from '../../../client/index.ts';
import type { ChatVisual } from '../../../contracts/index.ts';
import { VisualFrame } from '../visuals/VisualFrame.tsx';
import { useAction } from './action.ts';
import { Dialog } from './Dialog.tsx';
import { useThread } from './live.ts';

export function VisualsPanel({ channel }: { channel: ChatChannel }) {
  const thread = useThread(channel, ['visuals']);
  const action = useAction();
  const [shown, setShown] = useState<ChatVisual | null>(null);
  const visuals = thread.visuals;
  return (
    <section class="tool-panel visuals-panel" aria-label="Visuals">
      {visuals.length === 0 ? (
        <p class="muted">No visuals in this chat.</p>
      ) : (
        <ul class="visual-list">
          {visuals.map((visual) => (
            <li key={visual.id} class="visual-entry">
              <button type="button" class="visual-open" onClick={() => setShown(visual)}>
                {visual.title}
              </button>
              <button
                type="button"
                class="link"
                aria-label={`Remove the visual ${visual.title}`}
                disabled={action.busy !== null}
                onClick={() => void action.run('remove', () => channel.request('chat.removeVisual', { chatId: channel.chatId, visualId: visual.id }))}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      {action.error ? (
        <p class="request-error" role="alert">
          {action.error}
        </p>
      ) : null}
      {shown ? (
        <Dialog title={shown.title} onClose={() => setShown(null)} className="visual-dialog">
          <VisualFrame hostId={channel.hostId} chatId={channel.chatId} visual={shown} />
        </Dialog>
      ) : null}
    </section>
  );
}
