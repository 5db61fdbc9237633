// A tool call, folded to one line (what it did to what, and how it went); open, its input, its output
// (streamed while it runs), the files it changed as diffs, a workflow's phases and agents.
import { useContext } from 'preact/hooks';
import { generatedImageAttachment, type ChatToolItem, type ChatWorkflow } from '../../../contracts/index.ts';
import { DiffLines, FileChanges, editPatch } from './Diff.tsx';
import { Fold } from './Fold.tsx';
import { formatBytes, formatDuration } from './format.ts';
import { ThreadScopeContext } from './scope.ts';

/** Past this many characters an output shows its end (a running command's newest lines matter most). */
const OUTPUT_TAIL = 40_000;
const INPUT_MAX = 20_000;

type Input = Record<string, unknown>;
const asInput = (input: unknown): Input => (input && typeof input === 'object' && !Array.isArray(input) ? (input as Input) : {});
const str = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);

/** The one line that says what a call is about: its command, file, pattern, address or query. */
export function toolSubject(item: ChatToolItem): string {
  const input = asInput(item.input);
  const command = input.command;
  if (Array.isArray(command)) return command.map(String).join(' ');
  return (
    str(command) ??
    str(input.file_path) ??
    str(input.path) ??
    str(input.notebook_path) ??
    str(input.pattern) ??
    str(input.url) ??
    str(input.query) ??
    str(input.description) ??
    item.progress?.description ??
    ''
  );
}

const STATE_LABEL = { running: 'running', done: 'done', error: 'failed', waiting: 'waiting for your answer' } as const;

function ToolInput({ item }: { item: ChatToolItem }) {
  const input = asInput(item.input);
  const path = str(input.file_path) ?? str(input.path) ?? 'file';
  if (!item.changes?.length && typeof input.old_string === 'string' && typeof input.new_string === 'string') {
    return <DiffLines diff={editPatch(path, input.old_string, input.new_string)} label={`Edit of ${path}`} />;
  }
  if (typeof input.command === 'string' && Object.keys(input).every((k) => k === 'command' || k === 'description' || k === 'timeout')) {
    return (
      <pre class="tool-command">
        <code>$ {input.command}</code>
      </pre>
    );
  }
  if (typeof input.content === 'string' && str(input.file_path)) {
    return (
      <pre class="tool-input">
        <code>{clip(input.content, INPUT_MAX)}</code>
      </pre>
    );
  }
  if (item.input === undefined || Object.keys(input).length === 0) return null;
  return (
    <pre class="tool-input">
      <code>{clip(JSON.stringify(item.input, null, 2), INPUT_MAX)}</code>
    </pre>
  );
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}\n… (${text.length - max} more characters)` : text;
}

function ToolOutput({ item }: { item: ChatToolItem }) {
  const output = item.state === 'running' ? (item.progress?.output ?? item.output) : item.output;
  if (!output) return item.state === 'running' ? <p class="tool-waiting">Waiting for output…</p> : null;
  const tail = output.length > OUTPUT_TAIL;
  return (
    <div class={`tool-output${item.state === 'error' ? ' error' : ''}`}>
      {tail ? (
        <p class="tool-clipped">
          Showing the last {OUTPUT_TAIL.toLocaleString()} of {output.length.toLocaleString()} characters
        </p>
      ) : null}
      <pre aria-label="Output">
        <code>{tail ? output.slice(-OUTPUT_TAIL) : output}</code>
      </pre>
    </div>
  );
}

function Workflow({ workflow }: { workflow: ChatWorkflow }) {
  return (
    <div class="workflow">
      {workflow.name ? <p class="workflow-name">{workflow.name}</p> : null}
      {workflow.stalledAt ? <p class="workflow-stalled">Stalled: no progress lately</p> : null}
      <ol class="workflow-agents">
        {workflow.agents.map((agent) => {
          const phase = workflow.phases.find((p) => p.index === agent.phaseIndex);
          return (
            <li key={agent.index} class={`workflow-agent status-${agent.status}`}>
              <span class="agent-label">{agent.label}</span>
              {phase ? <span class="agent-phase">{phase.title}</span> : null}
              <span class="agent-status">{agent.status}</span>
              {agent.durationMs !== null ? <span class="agent-duration">{formatDuration(agent.durationMs)}</span> : null}
              {agent.lastTool ? <span class="agent-tool">{agent.lastTool}</span> : null}
            </li>
          );
        })}
      </ol>
    </div>
  );
}

export function ToolCall({ item }: { item: ChatToolItem }) {
  const scope = useContext(ThreadScopeContext);
  // A call its approval holds does not run yet: no spinner, and its command is left to the card (once).
  const waiting =
    item.state === 'running' && (scope?.channel.thread.pending.some((request) => request.kind === 'approval' && request.toolUseId === item.toolUseId) ?? false);
  const subject = waiting ? '' : toolSubject(item);
  const shown = waiting ? 'waiting' : item.state;
  const state = STATE_LABEL[shown];
  const image = generatedImageAttachment(item);
  const changed = item.changes?.length ?? 0;
  return (
    <Fold
      foldKey={item.id}
      className={`tool tool-${item.state}`}
      label={`${item.name}${subject ? `: ${subject}` : ''} (${state}), show details`}
      head={
        <>
          <span class={`tool-state state-${shown}`} aria-hidden="true" />
          <span class="tool-name">{item.name}</span>
          {subject ? <span class="tool-subject">{subject}</span> : null}
          {waiting ? <span class="tool-subject">waiting for your answer</span> : null}
          {changed ? <span class="tool-changed">{changed === 1 ? '1 file' : `${changed} files`}</span> : null}
          <span class="visually-hidden">{state}</span>
        </>
      }
    >
      {() => (
        <>
          {item.progress?.description && item.progress.description !== subject ? <p class="tool-description">{item.progress.description}</p> : null}
          <ToolInput item={item} />
          {image ? (
            <p class="tool-image">
              Image: {image.name} ({formatBytes(image.size)})
            </p>
          ) : null}
          <ToolOutput item={item} />
          {item.changes?.length ? <FileChanges changes={item.changes} /> : null}
          {item.workflow ? <Workflow workflow={item.workflow} /> : null}
        </>
      )}
    </Fold>
  );
}
