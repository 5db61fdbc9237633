// What the chat's CLI keeps running between turns (ChatInfo.background: Claude Code's background
// shell commands and monitors) with a Stop for each (`chat.stopTask` names the CLI's own task id),
// and whether a native subagent or workflow still works (`delegating`). Drawn only when there is
// something: a chat with nothing running costs no row.
import { useState } from 'preact/hooks';
import type { ChatChannel } from '../../../client/index.ts';
import type { ChatBackgroundTask } from '../../../contracts/index.ts';
import { ago } from '../../hosts/time.ts';
import { errorText } from '../tools/action.ts';
import { useThread } from '../tools/live.ts';
import './work.css';

const KIND_LABEL: Record<ChatBackgroundTask['kind'], string> = { shell: 'Shell', monitor: 'Monitor' };

function TaskRow({ channel, task }: { channel: ChatChannel; task: ChatBackgroundTask }) {
  const [stopping, setStopping] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const stop = async () => {
    setStopping(true);
    setError(null);
    try {
      await channel.request('chat.stopTask', { chatId: channel.chatId, taskId: task.id });
      // The row goes when the CLI reports the task ended (the next ChatInfo); until then it says so.
    } catch (failure) {
      setError(errorText(failure));
      setStopping(false);
    }
  };
  const name = task.description || task.command || task.id;
  return (
    <li class="background-task" data-task-id={task.id}>
      <span class="background-kind">{KIND_LABEL[task.kind]}</span>
      <span class="background-what">
        <span class="background-description">{name}</span>
        {task.command && task.command !== name ? <code class="background-command">{task.command}</code> : null}
      </span>
      <span class="background-since muted small" title={new Date(task.startedAt).toLocaleString()}>
        started {ago(task.startedAt)}
      </span>
      <button type="button" class="danger small-button" disabled={stopping} aria-label={`Stop ${name}`} onClick={() => void stop()}>
        {stopping ? 'Stopping…' : 'Stop'}
      </button>
      {error ? (
        <span class="request-error" role="alert">
          {error}
        </span>
      ) : null}
    </li>
  );
}

export function BackgroundTasks({ channel }: { channel: ChatChannel }) {
  const thread = useThread(channel, ['info', 'snapshot']);
  const tasks = thread.info?.background ?? [];
  const delegating = thread.info?.delegating === true;
  if (tasks.length === 0 && !delegating) return null;
  return (
    <section class="background-tasks" aria-label="Running in the background">
      {tasks.length > 0 ? (
        <>
          <h2 class="background-title">Running in the background ({tasks.length})</h2>
          <ul class="background-list">
            {tasks.map((task) => (
              <TaskRow key={task.id} channel={channel} task={task} />
            ))}
          </ul>
        </>
      ) : null}
      {delegating ? (
        <p class="background-delegating muted small" role="status">
          A subagent is still working for this chat.
        </p>
      ) : null}
    </section>
  );
}
