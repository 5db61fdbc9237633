// The end of a turn: how it ended, how long it took, what it cost, the limit it hit, the files it
// changed (its checkpoint diff), and what can be done with it (W3's TurnActions).
import type { ChatCheckpointDiff, ChatTurnItem } from '../../../contracts/index.ts';
import type { ChatChannel } from '../../../client/index.ts';
import { TurnActions } from '../tools/TurnActions.tsx';
import { DiffLines } from './Diff.tsx';
import { Fold } from './Fold.tsx';
import { formatCost, formatDuration, formatTime } from './format.ts';

const STATE_LABEL = { running: 'Working', done: 'Done', aborted: 'Stopped', error: 'Failed' } as const;

function limitText(turn: ChatTurnItem): string | null {
  if (!turn.limit) return null;
  const what = turn.limit.kind === 'usage' ? 'Usage limit reached' : 'The provider is overloaded';
  return turn.limit.resetsAt ? `${what}; resets ${formatTime(turn.limit.resetsAt)}` : what;
}

function CheckpointDiff({ turn, diff }: { turn: ChatTurnItem; diff: ChatCheckpointDiff }) {
  const added = diff.files.reduce((n, f) => n + f.added, 0);
  const deleted = diff.files.reduce((n, f) => n + f.deleted, 0);
  const files = diff.files.length === 1 ? '1 file changed' : `${diff.files.length}${diff.truncated ? '+' : ''} files changed`;
  return (
    <Fold
      foldKey={`${turn.id}:diff`}
      className="turn-diff"
      label={`${files}, +${added} −${deleted}, show the diff`}
      head={
        <span class="fold-title">
          {files} <span class="diff-added">+{added}</span> <span class="diff-deleted">−{deleted}</span>
        </span>
      }
    >
      {() => (
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
        </ul>
      )}
    </Fold>
  );
}

export function TurnFooter({ item, channel }: { item: ChatTurnItem; channel: ChatChannel }) {
  const limit = limitText(item);
  const duration = item.endedAt !== null ? formatDuration(item.endedAt - item.createdAt) : null;
  return (
    <footer class={`turn turn-${item.state}`} aria-label={`Turn ${STATE_LABEL[item.state].toLowerCase()}`}>
      <p class="turn-facts">
        <span class="turn-state">
          {item.label ? `${item.label}: ` : ''}
          {STATE_LABEL[item.state]}
        </span>
        {duration ? (
          <span class="turn-duration" title="Duration">
            {duration}
          </span>
        ) : null}
        <span class="turn-cost" title="Cost">
          {formatCost(item.costUsd)}
        </span>
        {item.attempt && item.attempt > 1 ? <span class="turn-attempt">attempt {item.attempt}</span> : null}
        <TurnActions item={item} channel={channel} />
      </p>
      {limit ? (
        <p class="turn-limit" role="note">
          {limit}
        </p>
      ) : null}
      {item.checkpointDiff && item.checkpointDiff.files.length > 0 ? <CheckpointDiff turn={item} diff={item.checkpointDiff} /> : null}
    </footer>
  );
}
