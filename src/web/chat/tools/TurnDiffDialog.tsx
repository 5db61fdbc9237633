// What one turn changed in the chat's folder (`chat.turnDiff`: between the work tree's snapshots
// around the turn, so far for a running one), file by file as diffs. The closing snapshot is taken
// just after the turn settles, so a dialog opened in between (or on a running turn) reads the diff
// again once the turn's item says that snapshot exists; an answer overtaken by a newer ask is dropped.
import { useEffect, useState } from 'preact/hooks';
import type { ChatChannel } from '../../../client/index.ts';
import type { ChatCheckpointDiff } from '../../../contracts/index.ts';
import { DiffLines } from '../items/Diff.tsx';
import { useAction } from './action.ts';
import { Dialog } from './Dialog.tsx';

export function TurnDiffDialog({ channel, turnId, onClose }: { channel: ChatChannel; turnId: string; onClose(): void }) {
  const load = useAction();
  const [diff, setDiff] = useState<ChatCheckpointDiff | null | undefined>(undefined);
  const [closed, setClosed] = useState(() => closingSnapshot(channel, turnId));
  useEffect(
    () =>
      channel.thread.subscribe((change) => {
        if ((change.kind === 'item' && change.id === turnId) || change.kind === 'snapshot') setClosed(closingSnapshot(channel, turnId));
      }),
    [channel, turnId],
  );
  // biome-ignore lint/correctness/useExhaustiveDependencies: `closed` is read to load the diff again once the turn closes; `load` is stable
  useEffect(() => {
    let current = true;
    void load
      .run('diff', () => channel.request('chat.turnDiff', { chatId: channel.chatId, turnId }))
      .then((result) => {
        if (result && current) setDiff(result.diff);
      });
    return () => {
      current = false;
    };
  }, [channel, turnId, closed]);
  return (
    <Dialog title="Changes in this turn" onClose={onClose} className="turn-diff-dialog">
      {load.busy ? (
        <p class="muted" role="status">
          Reading the changes…
        </p>
      ) : null}
      {load.error ? (
        <p class="request-error" role="alert">
          {load.error}
        </p>
      ) : null}
      {diff === null ? <p class="muted">No changes recorded for this turn (no repository, or nothing changed).</p> : null}
      {diff ? (
        diff.files.length === 0 ? (
          <p class="muted">This turn changed no files.</p>
        ) : (
          <ul class="file-changes">
            {diff.files.map((file) => (
              <li key={file.path} class="file-change">
                <p class="file-change-head">
                  <code class="file-path">{file.path}</code> <span class="diff-added">+{file.added}</span> <span class="diff-deleted">−{file.deleted}</span>
                </p>
                {file.omitted ? (
                  <p class="diff-more">{file.omitted === 'binary' ? 'Binary file' : 'Too large to show'}</p>
                ) : (
                  <DiffLines diff={file.diff} label={`Diff of ${file.path}`} />
                )}
              </li>
            ))}
            {diff.truncated ? <li class="diff-more">More files changed than are listed.</li> : null}
          </ul>
        )
      ) : null}
    </Dialog>
  );
}

/** The turn's closing snapshot, once taken (null before, or for a turn that has none). */
function closingSnapshot(channel: ChatChannel, turnId: string): string | null {
  const turn = channel.thread.get(turnId);
  return turn?.kind === 'turn' ? (turn.checkpointAfter ?? null) : null;
}
