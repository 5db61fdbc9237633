// One open chat: a header (title, live status; folder, model, host presence, context and cost on one
// line; the limit its last turn stopped on), the chat's tools (W3), the thread, the requests waiting in
// pages not loaded yet, what the CLI keeps running in the background, and the composer (W3), which
// also says while the agent works. The chat's socket is held while this view is open.
import { useEffect, useMemo, useReducer } from 'preact/hooks';
import { chatTitle, modelName, type ChatChannel, type ThreadChange } from '../../client/index.ts';
import type { AgentStatus } from '../../contracts/index.ts';
import { chatChannel, releaseChat } from '../app/session.ts';
import { Composer } from './composer/Composer.tsx';
import { formatCost, formatTokens } from './items/format.ts';
import { ApprovalCard } from './requests/ApprovalCard.tsx';
import { QuestionForm } from './requests/QuestionForm.tsx';
import { Thread } from './Thread.tsx';
import { ChatToolbar } from './tools/ChatToolbar.tsx';
import { BackgroundTasks } from './work/BackgroundTasks.tsx';
import { ChatLimit } from './work/ChatLimit.tsx';
import './chat.css';

/** Redraws the caller when the channel's link, host presence or the thread changes in one of these ways. */
function useChannel(channel: ChatChannel, kinds: ReadonlyArray<ThreadChange['kind']>): void {
  const [, redraw] = useReducer((n: number) => n + 1, 0);
  const drawn = { version: channel.thread.version, state: channel.state, online: channel.online };
  // biome-ignore lint/correctness/useExhaustiveDependencies: subscribed once per channel; `kinds` and `drawn` are this draw's, read once
  useEffect(() => {
    const stops = [
      channel.onState(() => redraw(0)),
      channel.onPresence(() => redraw(0)),
      channel.thread.subscribe((change) => {
        if (kinds.includes(change.kind)) redraw(0);
      }),
    ];
    // Whatever changed between the draw and these subscriptions (an attach can answer that quickly).
    if (drawn.version !== channel.thread.version || drawn.state !== channel.state || drawn.online !== channel.online) redraw(0);
    return () => {
      for (const stop of stops) stop();
    };
  }, [channel]);
}

const STATUS_LABEL: Record<AgentStatus, string> = {
  running: 'Working',
  'needs-you': 'Needs you',
  idle: 'Idle',
  error: 'Error',
  exited: 'Ended',
};

function LinkState({ channel }: { channel: ChatChannel }) {
  if (channel.ended)
    return (
      <span class="link-state ended" role="alert">
        {channel.ended.message}
      </span>
    );
  switch (channel.state) {
    case 'connecting':
      return <span class="link-state connecting">Connecting…</span>;
    case 'offline':
      return <span class="link-state offline">Offline, reconnecting…</span>;
    case 'closed':
      return <span class="link-state offline">Closed</span>;
    default:
      return null;
  }
}

/**
 * Two lines, so the thread keeps the screen (a phone's 390×844 included): the title with the chat's
 * status, then one line of facts (folder, model, host, context, cost) that is cut rather than wrapped.
 */
function ChatHeader({ channel }: { channel: ChatChannel }) {
  useChannel(channel, ['info', 'snapshot']);
  const info = channel.thread.info;
  const usage = info?.usage;
  const folder = info?.cwd.split(/[\\/]/).filter(Boolean).pop() ?? '';
  const online = channel.online;
  return (
    <header class="chat-header">
      <div class="chat-title">
        <h1>{info ? chatTitle(info) : 'Chat'}</h1>
        {info ? <span class={`status-chip status-${info.status}`}>{STATUS_LABEL[info.status]}</span> : null}
      </div>
      <p class="chat-subtitle" aria-live="polite">
        {info ? (
          <span class="chat-folder" title={info.cwd}>
            {folder || info.cwd}
          </span>
        ) : null}
        {info?.model ? (
          <span class="chat-model" title={info.model}>
            {modelName(info.model)}
          </span>
        ) : null}
        {online === null ? null : <span class={`host-presence ${online ? 'online' : 'offline'}`}>{online ? 'Host online' : 'Host offline'}</span>}
        {usage ? (
          usage.contextWindow ? (
            <label class="context-meter" title="Context used">
              <meter
                min={0}
                max={usage.contextWindow}
                value={usage.contextTokens}
                low={usage.contextWindow * 0.7}
                high={usage.contextWindow * 0.9}
                optimum={0}
                aria-label="Context"
              />
              <span>
                {formatTokens(usage.contextTokens)} / {formatTokens(usage.contextWindow)}
              </span>
            </label>
          ) : (
            <span class="context-meter" title="Context used">
              {formatTokens(usage.contextTokens)}
            </span>
          )
        ) : null}
        {usage ? (
          <span class="chat-cost" title="Cost of this chat">
            {formatCost(usage.costUsd)}
          </span>
        ) : null}
      </p>
      {info ? <ChatLimit info={info} /> : null}
      <LinkState channel={channel} />
    </header>
  );
}

/** Approvals and questions waiting in pages not loaded: they must be answerable without scrolling back. */
function WaitingElsewhere({ channel }: { channel: ChatChannel }) {
  useChannel(channel, ['pending', 'item', 'snapshot', 'older']);
  const thread = channel.thread;
  const away = thread.pending.filter((request) => thread.indexOf(request.id) === undefined);
  if (away.length === 0) return null;
  return (
    <section class="waiting-elsewhere" aria-label="Waiting for you">
      {away.map((request) =>
        request.kind === 'approval' ? (
          <ApprovalCard key={request.id} item={request} channel={channel} />
        ) : (
          <QuestionForm key={request.id} item={request} channel={channel} />
        ),
      )}
    </section>
  );
}

export function ChatView({ hostId, chatId }: { hostId: string; chatId: string }) {
  const channel = useMemo(() => chatChannel(hostId, chatId), [hostId, chatId]);
  useEffect(() => () => releaseChat(hostId, chatId), [hostId, chatId]);
  return (
    <section class="chat-view" aria-label="Chat">
      <ChatHeader channel={channel} />
      <ChatToolbar channel={channel} hostId={hostId} />
      <Thread channel={channel} hostId={hostId} chatId={chatId} />
      <WaitingElsewhere channel={channel} />
      <BackgroundTasks channel={channel} />
      <Composer channel={channel} />
    </section>
  );
}
