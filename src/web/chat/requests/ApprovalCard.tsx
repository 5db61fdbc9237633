// An approval the agent waits for, in plain words: what it wants to do (the command once), and allow /
// allow always (only where the CLI proposed a rule, under the host's words for it) / deny (with a
// reason, where the CLI can carry one; the reason stays on the card for every device).
// The card is drawn from the item the thread holds, so when someone else (another person, another
// device, the terminal) answers first, the item changes and the card settles without a click here.
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import type { ChatChannel } from '../../../client/index.ts';
import type { ChatApprovalItem, ChatApproveDecision } from '../../../contracts/index.ts';
import { DiffLines, editPatch } from '../items/Diff.tsx';
import { useAction } from '../tools/action.ts';
import { chatCapabilities } from '../tools/capabilities.ts';
import { loadMe, me } from '../../app/session.ts';
import './requests.css';

/** What the agent asks, in words, by the tool it wants to use; the tool's own name stays beside it. */
const ASKS: Record<string, string> = {
  Bash: 'Run this command?',
  shell: 'Run this command?',
  exec_command: 'Run this command?',
  execute: 'Run this command?',
  Edit: 'Change this file?',
  MultiEdit: 'Change this file?',
  Write: 'Write this file?',
  NotebookEdit: 'Change this notebook?',
  edit: 'Change this file?',
  Read: 'Read this file?',
  read: 'Read this file?',
  WebFetch: 'Open this address?',
  fetch: 'Open this address?',
  WebSearch: 'Search the web?',
};

const SETTLED: Record<Exclude<ChatApprovalItem['decision'], 'pending'>, string> = {
  allow: 'Allowed',
  'allow-always': 'Always allowed',
  deny: 'Denied',
  cancelled: 'Cancelled: the agent stopped waiting',
};

/** The parts of a tool's input worth reading before saying yes: a command, a file, an edit. */
function approvalSubject(item: ChatApprovalItem): { input: Record<string, unknown>; command: string | undefined } {
  const input = typeof item.input === 'object' && item.input !== null ? (item.input as Record<string, unknown>) : {};
  const raw = input.command ?? input.cmd;
  const command = typeof raw === 'string' ? raw : Array.isArray(raw) ? raw.map(String).join(' ') : undefined;
  return { input, command };
}

function ApprovalSubject({ item }: { item: ChatApprovalItem }) {
  const { input, command } = approvalSubject(item);
  const text = (key: string) => (typeof input[key] === 'string' ? (input[key] as string) : undefined);
  const file = text('file_path') ?? text('path') ?? text('notebook_path');
  const after = text('new_string') ?? text('content');
  const other = text('url') ?? text('pattern') ?? text('query');
  return (
    <div class="approval-subject">
      {command !== undefined ? (
        <pre class="approval-command">
          <code>{command}</code>
        </pre>
      ) : null}
      {file !== undefined ? (
        <p>
          <code class="file-path">{file}</code>
        </p>
      ) : null}
      {file !== undefined && after !== undefined ? (
        <DiffLines diff={editPatch(file, text('old_string') ?? '', after)} label={`Proposed change to ${file}`} />
      ) : null}
      {command === undefined && file === undefined && other !== undefined ? (
        <p>
          <code>{other}</code>
        </p>
      ) : null}
      {command === undefined && file === undefined && other === undefined && Object.keys(input).length > 0 ? (
        <details class="approval-input">
          <summary>Input</summary>
          <pre>{JSON.stringify(input, null, 2)}</pre>
        </details>
      ) : null}
    </div>
  );
}

export function ApprovalCard({ item, channel }: { item: ChatApprovalItem; channel: ChatChannel }) {
  const capabilities = chatCapabilities(channel);
  const action = useAction();
  const [mine, setMine] = useState<ChatApproveDecision | null>(null);
  const [denying, setDenying] = useState(false);
  const [reason, setReason] = useState('');
  const reasonRef = useRef<HTMLTextAreaElement>(null);
  const headingId = useId();
  const reasonId = useId();
  const pending = item.decision === 'pending';
  // A deny reason only where the CLI passes it on (unknown capabilities: none offered).
  const takesReason = capabilities?.denyReason === true;

  useEffect(() => {
    if (denying) reasonRef.current?.focus();
  }, [denying]);
  // Who answered is compared with who is signed in, asked once if no page asked yet.
  useEffect(() => {
    if (!pending && !me.value) void loadMe().catch(() => undefined);
  }, [pending]);

  const decide = (decision: ChatApproveDecision) => {
    const message = decision === 'deny' && takesReason && reason.trim() ? reason.trim() : undefined;
    setMine(decision);
    void action
      .run(decision, () =>
        channel.request('chat.approve', {
          chatId: channel.chatId,
          requestId: item.requestId,
          decision,
          ...(message ? { message } : {}),
        }),
      )
      .then((answer) => {
        if (answer === undefined) setMine(null);
      });
  };

  const decision = item.decision;
  const settledText =
    decision === 'pending'
      ? null
      : decision === 'allow-always' && item.allowAlways
        ? `${SETTLED['allow-always']}: ${item.allowAlways.label}`
        : decision === 'deny' && item.reason
          ? `${SETTLED.deny}: ${item.reason}`
          : SETTLED[decision];
  // "Elsewhere" means someone else: the host says who answered; this person on another device is not.
  const elsewhere =
    !pending &&
    item.decision !== 'cancelled' &&
    mine !== item.decision &&
    item.answeredBy !== undefined &&
    me.value !== null &&
    item.answeredBy !== me.value.id;
  const ask = ASKS[item.toolName];
  const subject = approvalSubject(item);
  // The CLI's description often repeats the command; then it is said once.
  const description = item.description && item.description.trim() !== subject.command?.trim() ? item.description : null;

  return (
    <section
      class={`request-card approval-card ${pending ? 'pending' : `settled decision-${item.decision}`}`}
      aria-labelledby={headingId}
      data-request={item.requestId}
    >
      <h3 id={headingId} class="request-title">
        {pending && ask ? (
          <>
            {ask} <span class="tool-name small">{item.toolName}</span>
          </>
        ) : (
          <>
            {pending ? 'Allow ' : ''}
            <span class="tool-name">{item.toolName}</span>
            {pending ? '?' : ''}
          </>
        )}
      </h3>
      {description ? <p class="request-description">{description}</p> : null}
      <ApprovalSubject item={item} />
      {pending ? (
        denying && takesReason ? (
          <form
            class="deny-form"
            onSubmit={(event) => {
              event.preventDefault();
              decide('deny');
            }}
          >
            <label for={reasonId}>Reason for the agent (optional)</label>
            <textarea id={reasonId} ref={reasonRef} rows={2} value={reason} onInput={(event) => setReason(event.currentTarget.value)} />
            <div class="request-actions">
              <button type="submit" class="danger" disabled={action.busy !== null}>
                Deny
              </button>
              <button type="button" onClick={() => setDenying(false)} disabled={action.busy !== null}>
                Back
              </button>
            </div>
          </form>
        ) : (
          <div class="request-actions" role="group" aria-label={`Answer the ${item.toolName} request`}>
            <button type="button" class="primary" onClick={() => decide('allow')} disabled={action.busy !== null}>
              Allow
            </button>
            {item.canAllowAlways ? (
              <button type="button" onClick={() => decide('allow-always')} disabled={action.busy !== null} title={item.allowAlways?.description || undefined}>
                {item.allowAlways?.label ?? 'Allow always'}
              </button>
            ) : null}
            <button type="button" class="danger" onClick={() => (takesReason ? setDenying(true) : decide('deny'))} disabled={action.busy !== null}>
              {takesReason ? 'Deny…' : 'Deny'}
            </button>
          </div>
        )
      ) : null}
      <p class="request-state" role="status">
        {action.busy ? 'Sending your answer…' : settledText ? `${settledText}${elsewhere ? ' (answered elsewhere)' : ''}` : ''}
      </p>
      {action.error && pending ? (
        <p class="request-error" role="alert">
          {action.error}
        </p>
      ) : null}
    </section>
  );
}
