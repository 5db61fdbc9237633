// The chat's tools, above the thread: its bookmarks, its visuals, a fork after the latest settled
// turn, and export as a transcript (JSON or Markdown). One panel open at a time; each is a labelled
// toggle button, so the bar works from the keyboard and reads well to a screen reader.
import { useState } from 'preact/hooks';
import type { ChatChannel } from '../../../client/index.ts';
import type { ChatItem } from '../../../contracts/index.ts';
import { useAction } from './action.ts';
import { BookmarksPanel } from './BookmarksPanel.tsx';
import { exportChat, type ExportFormat } from './export.ts';
import { ForkDialog } from './ForkDialog.tsx';
import { useThread } from './live.ts';
import { VisualsPanel } from './VisualsPanel.tsx';
import './tools.css';

type Panel = 'bookmarks' | 'visuals' | 'export';

/** The newest turn that ended (a fork takes the history through a whole turn); looks back from the end. */
function latestSettledTurn(items: readonly ChatItem[]): ChatItem | undefined {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.kind === 'turn' && item.state !== 'running') return item;
  }
  return undefined;
}

export function ChatToolbar({ channel, hostId: _hostId }: { channel: ChatChannel; hostId: string }) {
  const thread = useThread(channel, ['bookmarks', 'visuals', 'item', 'snapshot']);
  const [panel, setPanel] = useState<Panel | null>(null);
  const [forking, setForking] = useState<string | null>(null);
  const saving = useAction();
  const toggle = (next: Panel) => setPanel((current) => (current === next ? null : next));
  const lastTurn = latestSettledTurn(thread.items);
  const save = (format: ExportFormat) => void saving.run(format, () => exportChat(channel, format));

  return (
    <div class="chat-toolbar">
      <div class="toolbar-buttons" role="toolbar" aria-label="Chat tools">
        <button type="button" aria-expanded={panel === 'bookmarks'} aria-controls="chat-tool-panel" onClick={() => toggle('bookmarks')}>
          Bookmarks{thread.bookmarks.length ? ` (${thread.bookmarks.length})` : ''}
        </button>
        <button type="button" aria-expanded={panel === 'visuals'} aria-controls="chat-tool-panel" onClick={() => toggle('visuals')}>
          Visuals{thread.visuals.length ? ` (${thread.visuals.length})` : ''}
        </button>
        <button type="button" aria-expanded={panel === 'export'} aria-controls="chat-tool-panel" onClick={() => toggle('export')}>
          Export
        </button>
        <button type="button" disabled={!lastTurn} onClick={() => lastTurn && setForking(lastTurn.id)}>
          Fork
        </button>
      </div>
      <div id="chat-tool-panel">
        {panel === 'bookmarks' ? <BookmarksPanel channel={channel} onJump={() => setPanel(null)} /> : null}
        {panel === 'visuals' ? <VisualsPanel channel={channel} /> : null}
        {panel === 'export' ? (
          <section class="tool-panel export-panel" aria-label="Export">
            <p class="muted small">The whole chat as a transcript file.</p>
            <div class="request-actions">
              <button type="button" disabled={saving.busy !== null} onClick={() => save('json')}>
                Download JSON
              </button>
              <button type="button" disabled={saving.busy !== null} onClick={() => save('markdown')}>
                Download Markdown
              </button>
            </div>
            {saving.busy ? (
              <p class="muted" role="status">
                Preparing the transcript…
              </p>
            ) : null}
            {saving.error ? (
              <p class="request-error" role="alert">
                {saving.error}
              </p>
            ) : null}
          </section>
        ) : null}
      </div>
      {forking ? <ForkDialog channel={channel} turnId={forking} onClose={() => setForking(null)} /> : null}
    </div>
  );
}
