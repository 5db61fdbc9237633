// A chat exported as a transcript: JSON in the ChatTranscript shape (src/contracts/transcript.ts says
// where each item kind lands) and Markdown for people. Both read what the thread holds: load the older
// pages first (`thread.loadAll()`) to export the whole chat. Markdown is split into blocks with marked's
// lexer, the parser the app draws replies with, so a block here is a block there.
import { marked, type Token, type Tokens } from 'marked';
import { chatTitle } from './chat-title.ts';
import {
  ChatTranscriptSchema,
  type ChatInfo,
  type ChatItem,
  type ChatTranscript,
  type TranscriptAttachment,
  type TranscriptBlock,
  type TranscriptMessage,
  type TranscriptNotice,
  type TranscriptToolActivity,
  type TranscriptUsage,
} from '../contracts/index.ts';

/** What an export reads: a ThreadModel, or any info and items. */
export interface TranscriptSource {
  info: ChatInfo | null;
  items: readonly ChatItem[];
}

type TurnItem = Extract<ChatItem, { kind: 'turn' }>;

export function transcriptJson(thread: TranscriptSource): ChatTranscript {
  const info = thread.info;
  if (!info) throw new Error('The chat has not been loaded yet (attach first)');
  const chatId = info.chatId;
  const items = thread.items;
  const turns = new Map<string, TurnItem>();
  for (const item of items) if (item.kind === 'turn') turns.set(item.id, item);
  const replies = repliesByTurn(items);
  const firstUser = new Map<string, string>();
  for (const item of items) if (item.kind === 'user' && item.turnId && !firstUser.has(item.turnId)) firstUser.set(item.turnId, item.id);

  const messages: TranscriptMessage[] = [];
  const blocks: TranscriptBlock[] = [];
  const activities: TranscriptToolActivity[] = [];
  const notices: TranscriptNotice[] = [];
  const usage: TranscriptUsage[] = [];
  const attachments: TranscriptAttachment[] = [];
  const model = { provider: info.provider, requested_model: info.selection.model };

  for (const item of items) {
    const turn = item.turnId ? turns.get(item.turnId) : undefined;
    const beside = replyBeside(replies, item);
    switch (item.kind) {
      case 'user':
      case 'assistant': {
        const reply = item.kind === 'assistant';
        messages.push({
          id: item.id,
          chat_id: chatId,
          ordinal: messages.length,
          role: item.kind,
          state: reply ? replyState(item.streaming, turn) : 'complete',
          markdown: item.text,
          origin_message_id: reply && item.turnId ? (firstUser.get(item.turnId) ?? null) : null,
          ...model,
          resolved_model: reply ? info.model : null,
          error_class: reply ? errorClass(turn) : null,
          created_at: item.createdAt,
          completed_at: reply ? (turn?.endedAt ?? null) : item.createdAt,
          parent_tool_use_id: reply ? (item.parentToolUseId ?? null) : null,
        });
        for (const block of markdownBlocks(item.text))
          blocks.push({ id: `${item.id}:${blocks.length}`, message_id: item.id, ordinal: blocks.length, ...block });
        if (item.kind === 'user') {
          for (const file of item.attachments ?? []) {
            attachments.push({
              id: file.id,
              chat_id: chatId,
              message_id: item.id,
              ordinal: attachments.length,
              name: file.name,
              mime: file.mime,
              size: file.size,
              path: file.path,
              width: file.width ?? null,
              height: file.height ?? null,
            });
          }
        }
        continue;
      }
      case 'thinking':
        blocks.push({ id: item.id, message_id: beside, ordinal: blocks.length, kind: 'thinking', markdown: item.text, plain_text: item.text });
        continue;
      case 'tool':
        activities.push({
          ...activityBase(chatId, item, beside),
          kind: 'tool',
          tool_use_id: item.toolUseId,
          parent_tool_use_id: item.parentToolUseId,
          name: item.name,
          state: item.state,
          input: item.input ?? null,
          output: item.output ?? item.progress?.output ?? null,
          changes: item.changes ?? [],
          completed_at: item.state === 'running' ? null : (turn?.endedAt ?? null),
        });
        continue;
      case 'subagent':
        activities.push({
          ...activityBase(chatId, item, beside),
          kind: 'subagent',
          tool_use_id: item.toolUseId,
          parent_tool_use_id: item.parentToolUseId ?? null,
          name: item.subagentType ?? 'subagent',
          state: item.status,
          input: { description: item.description, prompt: item.prompt },
          output: item.result ?? item.summary,
          completed_at: item.finishedAt,
        });
        continue;
      case 'approval':
        activities.push({
          ...activityBase(chatId, item, beside),
          kind: 'approval',
          tool_use_id: item.toolUseId,
          name: item.toolName,
          state: item.decision,
          input: item.input ?? null,
          output: item.description,
        });
        continue;
      case 'question':
        activities.push({
          ...activityBase(chatId, item, beside),
          kind: 'question',
          name: 'question',
          state: item.state,
          input: { questions: item.questions },
          answers: item.answers,
        });
        continue;
      case 'note':
      case 'compaction':
        notices.push({
          id: item.id,
          attempt_id: item.turnId,
          chat_id: chatId,
          assistant_message_id: beside,
          text: item.kind === 'note' ? item.text : compactionText(item.preTokens),
          text_offset: 0,
          created_at: item.createdAt,
          level: item.kind === 'note' ? item.level : 'info',
          kind: item.kind,
        });
        continue;
      case 'turn':
        usage.push({
          message_id: replies.get(item.id)?.at(-1)?.id ?? null,
          turn_id: item.id,
          state: item.state,
          cost_usd: item.costUsd,
          started_at: item.createdAt,
          ended_at: item.endedAt,
          duration_ms: item.endedAt === null ? null : Math.max(0, item.endedAt - item.createdAt),
          limit: item.limit ? { kind: item.limit.kind, resets_at: item.limit.resetsAt ?? null } : null,
        });
        continue;
    }
  }

  const effort = info.selection.options.effort;
  return ChatTranscriptSchema.parse({
    chat: {
      id: chatId,
      title: chatTitle(info),
      private: false,
      current_model: { ...model, default_reasoning: typeof effort === 'string' ? effort : 'default' },
      branched_from: info.forkOf ? { chat_id: info.forkOf.chatId, through_message_id: info.forkOf.turnId } : null,
      agent_working_folder: info.cwd,
      agent_mode: info.effectiveRuntimeMode ?? info.runtimeMode,
      agent_fast: false,
      pinned_at: null,
      profile_id: info.account ?? null,
      created_at: info.createdAt,
      updated_at: items.reduce((latest, item) => Math.max(latest, item.createdAt), info.createdAt),
    },
    tool_policy: { chat_id: chatId, mode: info.effectiveRuntimeMode ?? info.runtimeMode, workspace_ids: [] },
    tool_activities: activities,
    notices,
    messages,
    blocks,
    pinned_documents: [],
    feedback: [],
    usage,
    sources: [],
    reasoning_control: null,
    agent_commands: info.slashCommands.map((name) => ({ name, description: '', display_name: `/${name.replace(/^\//, '')}`, kind: 'command', input_hint: '' })),
    attachments,
  });
}

/** The chat as Markdown: a heading, then every item in order, each drawn as a person reads it. */
export function transcriptMarkdown(thread: TranscriptSource): string {
  const info = thread.info;
  if (!info) throw new Error('The chat has not been loaded yet (attach first)');
  const out: string[] = [`# ${chatTitle(info)}`, '', `${info.provider} · ${info.model ?? info.selection.model} · ${info.cwd}`];
  for (const item of thread.items) {
    out.push('', ...itemMarkdown(item));
  }
  return `${out.join('\n')}\n`;
}

function itemMarkdown(item: ChatItem): string[] {
  switch (item.kind) {
    case 'user':
      return ['## You', '', item.text, ...(item.attachments ?? []).map((f) => `- attachment: ${f.name} (${f.mime}, ${f.size} bytes)`)];
    case 'assistant':
      return [item.parentToolUseId ? '## Assistant (subagent)' : '## Assistant', '', item.text];
    case 'thinking':
      return ['<details><summary>Thinking</summary>', '', item.text, '', '</details>'];
    case 'tool': {
      const output = item.output ?? item.progress?.output ?? null;
      return [
        `**Tool** \`${item.name}\` · ${item.state}`,
        '',
        fenced(JSON.stringify(item.input ?? null, null, 2), 'json'),
        ...(output ? ['', fenced(output, '')] : []),
        ...(item.changes ?? []).flatMap((c) => ['', `${c.kind} \`${c.path}\``, ...(c.diff ? ['', fenced(c.diff, 'diff')] : [])]),
      ];
    }
    case 'subagent':
      return [`**Subagent** ${item.description} · ${item.status}`, ...((item.result ?? item.summary) ? ['', (item.result ?? item.summary)!] : [])];
    case 'approval':
      return [`**Approval** \`${item.toolName}\`${item.description ? ` (${item.description})` : ''}: ${item.decision}`];
    case 'question':
      return item.questions.map((q) => `**Question** ${q.question} → ${item.answers?.[q.id] ?? `(${item.state})`}`);
    case 'turn': {
      const parts = [`turn ${item.state}`];
      if (item.costUsd > 0) parts.push(`$${item.costUsd.toFixed(4)}`);
      if (item.endedAt !== null) parts.push(`${((item.endedAt - item.createdAt) / 1000).toFixed(1)} s`);
      if (item.limit) parts.push(`stopped on the ${item.limit.kind} limit`);
      return [`_${parts.join(' · ')}_`];
    }
    case 'note':
      return [`> **${item.level}:** ${item.text.replace(/\n/g, '\n> ')}`];
    case 'compaction':
      return ['---', `_${compactionText(item.preTokens)}_`, '---'];
  }
}

// ---- mapping pieces ----

/** The replies (assistant items) of each turn, in order. */
function repliesByTurn(items: readonly ChatItem[]): Map<string, ChatItem[]> {
  const out = new Map<string, ChatItem[]>();
  for (const item of items) {
    if (item.kind !== 'assistant' || !item.turnId) continue;
    const list = out.get(item.turnId) ?? [];
    list.push(item);
    out.set(item.turnId, list);
  }
  return out;
}

/** The reply an item sits beside: the next reply of its turn, else the one before it, else none. */
function replyBeside(replies: Map<string, ChatItem[]>, item: ChatItem): string | null {
  if (!item.turnId || item.kind === 'assistant' || item.kind === 'user') return null;
  const list = replies.get(item.turnId);
  if (!list) return null;
  const after = list.find((reply) => reply.createdAt >= item.createdAt);
  return (after ?? list.at(-1))?.id ?? null;
}

function activityBase(chatId: string, item: ChatItem, beside: string | null) {
  return {
    id: item.id,
    chat_id: chatId,
    message_id: beside,
    turn_id: item.turnId,
    tool_use_id: null,
    parent_tool_use_id: null,
    output: null,
    changes: [],
    answers: null,
    created_at: item.createdAt,
    completed_at: null,
  };
}

function replyState(streaming: boolean, turn: TurnItem | undefined): TranscriptMessage['state'] {
  if (turn?.state === 'error') return 'error';
  if (turn?.state === 'aborted') return 'cancelled';
  return streaming || turn?.state === 'running' ? 'streaming' : 'complete';
}

function errorClass(turn: TurnItem | undefined): string | null {
  if (turn?.state !== 'error') return null;
  if (turn.limit) return turn.limit.kind === 'usage' ? 'usage-limit' : 'overload';
  return 'error';
}

function compactionText(preTokens: number | null): string {
  return preTokens === null ? 'Context compacted' : `Context compacted (${preTokens} tokens before)`;
}

/** A fence longer than any backtick run inside, so the content cannot end it. */
function fenced(text: string, lang: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${lang}\n${text}\n${fence}`;
}

const BLOCK_KINDS: Record<string, TranscriptBlock['kind']> = {
  paragraph: 'paragraph',
  text: 'paragraph',
  heading: 'heading',
  code: 'code',
  list: 'list',
  blockquote: 'quote',
  table: 'table',
  hr: 'rule',
  html: 'html',
};

/** Markdown as blocks, the way marked reads it (blank space between blocks is no block). */
function markdownBlocks(markdown: string): Array<Pick<TranscriptBlock, 'kind' | 'markdown' | 'plain_text'>> {
  const out: Array<Pick<TranscriptBlock, 'kind' | 'markdown' | 'plain_text'>> = [];
  for (const token of marked.lexer(markdown)) {
    const kind = BLOCK_KINDS[token.type];
    if (!kind) continue;
    out.push({ kind, markdown: token.raw.trim(), plain_text: plainText(token).trim() });
  }
  return out;
}

/** The words of a token without its markup. */
function plainText(token: Token): string {
  switch (token.type) {
    case 'code':
    case 'codespan':
    case 'text':
    case 'escape':
      return 'tokens' in token && token.tokens ? token.tokens.map(plainText).join('') : (token as Tokens.Text).text;
    case 'list':
      return (token as Tokens.List).items.map((entry) => entry.tokens.map(plainText).join('')).join('\n');
    case 'table': {
      const table = token as Tokens.Table;
      const row = (cells: Tokens.TableCell[]) => cells.map((cell) => cell.tokens.map(plainText).join('')).join('\t');
      return [row(table.header), ...table.rows.map(row)].join('\n');
    }
    case 'br':
    case 'space':
      return '\n';
    case 'hr':
      return '';
    default:
      if ('tokens' in token && Array.isArray(token.tokens)) return token.tokens.map(plainText).join('');
      return 'text' in token && typeof token.text === 'string' ? token.text : '';
  }
}
