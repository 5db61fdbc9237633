// `info.requests`: the approvals and questions waiting on a person, as short summaries every client
// gets with `chat.status`, attached or not. Texts are cut where CHAT_REQUEST_LIMITS says (never the
// choice labels or question ids: an answer is a label), and at most `perChat` are listed, oldest first.
import { CHAT_REQUEST_LIMITS, clipText } from '../../contracts/index.ts';
import type { ChatApprovalItem, ChatItem, ChatQuestionItem, ChatRequestApproval, ChatRequestSummary } from '../../contracts/index.ts';

export type RequestItem = ChatApprovalItem | ChatQuestionItem;

export function isPendingRequest(item: ChatItem): item is RequestItem {
  return (item.kind === 'approval' && item.decision === 'pending') || (item.kind === 'question' && item.state === 'pending');
}

export function requestSummaries(items: readonly ChatItem[]): ChatRequestSummary[] {
  const out: ChatRequestSummary[] = [];
  for (const item of items) {
    if (!isPendingRequest(item)) continue;
    out.push(summarize(item));
    if (out.length >= CHAT_REQUEST_LIMITS.perChat) break;
  }
  return out;
}

function summarize(item: RequestItem): ChatRequestSummary {
  if (item.kind === 'question') {
    return {
      requestId: item.requestId,
      itemId: item.id,
      kind: 'question',
      createdAt: item.createdAt,
      question: {
        questions: item.questions.map((q) => ({
          id: q.id,
          header: clipText(q.header, CHAT_REQUEST_LIMITS.header),
          question: clipText(q.question, CHAT_REQUEST_LIMITS.question),
          multiSelect: q.multiSelect,
          choices: q.choices.map((c) => ({ label: c.label, description: clipText(c.description, CHAT_REQUEST_LIMITS.choiceDescription) })),
        })),
        ...(item.async ? { async: true } : {}),
      },
    };
  }
  return {
    requestId: item.requestId,
    itemId: item.id,
    kind: 'approval',
    createdAt: item.createdAt,
    approval: approvalSummary(item),
  };
}

function approvalSummary(item: ChatApprovalItem): ChatRequestApproval {
  const input = (typeof item.input === 'object' && item.input !== null ? item.input : {}) as Record<string, unknown>;
  const text = (key: string): string | undefined => (typeof input[key] === 'string' ? input[key] : undefined);
  const command = text('command') ?? text('cmd');
  const filePath = text('file_path') ?? text('path') ?? text('notebook_path');
  const subject = firstLine(command ?? filePath ?? text('url') ?? text('pattern') ?? text('query') ?? '');
  const out: ChatRequestApproval = {
    toolName: item.toolName,
    subject: clipText(subject, CHAT_REQUEST_LIMITS.subject),
    description: item.description === null ? null : clipText(item.description, CHAT_REQUEST_LIMITS.description),
    canAllowAlways: item.canAllowAlways,
  };
  if (filePath !== undefined) out.path = filePath;
  if (item.allowAlways) out.allowAlways = item.allowAlways;
  let truncated = false;
  if (command !== undefined) {
    const cut = clipLines(command, CHAT_REQUEST_LIMITS.command, CHAT_REQUEST_LIMITS.commandLines);
    out.command = cut.text;
    truncated ||= cut.truncated;
  }
  const diff = editDiff(input);
  if (diff !== undefined) {
    const cut = clipLines(diff, CHAT_REQUEST_LIMITS.diff, CHAT_REQUEST_LIMITS.diffLines);
    out.diff = cut.text;
    truncated ||= cut.truncated;
  }
  if (truncated) out.truncated = true;
  return out;
}

/** For an edit-shaped input (old/new strings), the `-`/`+` lines without context. */
function editDiff(input: Record<string, unknown>): string | undefined {
  const before = input.old_string;
  const after = input.new_string ?? input.content;
  if (typeof after !== 'string') return undefined;
  const lines: string[] = [];
  if (typeof before === 'string' && before !== '') for (const line of before.split('\n')) lines.push(`-${line}`);
  for (const line of after.split('\n')) lines.push(`+${line}`);
  return lines.join('\n');
}

function clipLines(text: string, maxChars: number, maxLines: number): { text: string; truncated: boolean } {
  const lines = text.split('\n');
  let out = lines.length > maxLines ? lines.slice(0, maxLines).join('\n') : text;
  out = clipText(out, maxChars);
  return { text: out, truncated: out.length < text.length };
}

function firstLine(text: string): string {
  const at = text.indexOf('\n');
  return at < 0 ? text : text.slice(0, at);
}
