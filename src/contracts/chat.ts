import { z } from 'zod';
import { AgentKindSchema, AgentSessionIdSchema, AgentStatusSchema, SuggestedTitleSchema } from './agent.ts';
import { ChatIdSchema } from './ids.ts';
import {
  CHAT_ATTACHMENT_MAX_BYTES,
  CHAT_ATTACHMENTS_MAX_BYTES,
  CHAT_ATTACHMENTS_MAX_COUNT,
  CHAT_BOOKMARK_LIMITS,
  CHAT_FORK_TITLE_MAX,
  CHAT_PAGE_LIMITS,
  CHAT_SEND_LIMITS,
} from './limits.ts';
import { ModelSelectionSchema, RuntimeModeSchema } from './model.ts';
import { ProviderAccountIdSchema } from './provider-accounts.ts';
import { attachmentBytes } from './text.ts';
import { ChatVisualsSchema } from './visual.ts';
import { WorktreeSchema } from './worktree.ts';

// Compatibility rule for everything in this file: strict clients validate whole
// `chat.attach` / `chat.history` answers, so a contract grows by optional
// fields only — never a new item kind, never a new value in an enum a chat
// already carries. Optional (key may be absent) and nullable (key present,
// value may be null) are different promises and are kept apart.

const ms = z.number();
const count = z.int().nonnegative();
const pageSize = z.int().min(1).max(CHAT_PAGE_LIMITS.pageMax);

// ---------------------------------------------------------------------------
// Attachments

// ceil(10 MiB / 3) · 4: the longest base64 that can still decode to 10 MiB.
const ATTACHMENT_DATA_MAX_LENGTH = Math.ceil(CHAT_ATTACHMENT_MAX_BYTES / 3) * 4;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

// What a client sends. Bytes travel only here: the host turns uploads into
// files before queueing, so threads and queues carry paths, never bytes.
export const ChatAttachmentUploadSchema = z.object({
  name: z.string().min(1).max(255),
  mime: z.string().min(1).max(255),
  // Raw base64, no `data:` prefix.
  data: z
    .string()
    .min(1)
    .max(ATTACHMENT_DATA_MAX_LENGTH)
    .refine((data) => data.length % 4 === 0 && BASE64.test(data), 'Invalid attachment base64')
    .refine((data) => attachmentBytes(data) <= CHAT_ATTACHMENT_MAX_BYTES, 'Attachment exceeds 10 MiB'),
});
export type ChatAttachmentUpload = z.output<typeof ChatAttachmentUploadSchema>;

export const ChatAttachmentUploadsSchema = z
  .array(ChatAttachmentUploadSchema)
  .max(CHAT_ATTACHMENTS_MAX_COUNT)
  .refine(
    (uploads) => uploads.reduce((sum, upload) => sum + attachmentBytes(upload.data), 0) <= CHAT_ATTACHMENTS_MAX_BYTES,
    'Attachments must total at most 10 MiB per message',
  );
export type ChatAttachmentUploads = z.output<typeof ChatAttachmentUploadsSchema>;

// What the thread keeps once the host stored the bytes.
export const ChatAttachmentSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  mime: z.string(),
  size: count,
  // Absolute on the host's machine, not the client's.
  path: z.string(),
  width: z.int().positive().optional(),
  height: z.int().positive().optional(),
});
export type ChatAttachment = z.output<typeof ChatAttachmentSchema>;

// ---------------------------------------------------------------------------
// Intelligent UI (generated interfaces inside replies)

export const UiDiagnosticSchema = z.object({
  code: z.string(),
  message: z.string(),
  start: count,
  end: count,
  nodeId: z.string().optional(),
});
export type UiDiagnostic = z.output<typeof UiDiagnosticSchema>;

export type UiNode = {
  id: string;
  type: string;
  props: Record<string, unknown>;
  expressions: Record<string, unknown>;
  bindings: Record<string, string>;
  children: UiNode[];
  complete: boolean;
  fallback: string;
  error?: string | undefined;
  start: number;
  end: number;
};

// Nodes nest, so the schema refers to itself through a getter.
export const UiNodeSchema = z.object({
  id: z.string(),
  type: z.string(),
  props: z.record(z.string(), z.unknown()),
  expressions: z.record(z.string(), z.unknown()),
  bindings: z.record(z.string(), z.string()),
  get children(): z.ZodArray<z.ZodType<UiNode>> {
    return z.array(UiNodeSchema);
  },
  complete: z.boolean(),
  fallback: z.string(),
  error: z.string().optional(),
  start: count,
  end: count,
});

export const UiQueryDeclarationSchema = z.object({
  source: z.string(),
  args: z.record(z.string(), z.unknown()),
  expression: z.unknown().optional(),
});
export type UiQueryDeclaration = z.output<typeof UiQueryDeclarationSchema>;

export const UiBlockSchema = z.object({
  id: z.string(),
  catalogVersion: count,
  revision: z.string().min(1).optional(),
  // Offsets of the block in the reply text.
  start: count,
  end: count,
  complete: z.boolean(),
  defaults: z.record(z.string(), z.unknown()),
  queries: z.record(z.string(), UiQueryDeclarationSchema),
  nodes: z.array(UiNodeSchema),
  diagnostics: z.array(UiDiagnosticSchema),
  // What a client that cannot render the block shows instead.
  fallback: z.string(),
});
export type UiBlock = z.output<typeof UiBlockSchema>;

export const UiBlocksSchema = z.array(UiBlockSchema);
export type UiBlocks = z.output<typeof UiBlocksSchema>;

// Labels and context come from the host's stored block, never from the client.
export const ChatUiChoiceOriginSchema = z.object({
  itemId: z.string().min(1),
  blockId: z.string().min(1),
  revision: z.string().min(1),
  choiceId: z.string().min(1),
  label: z.string().min(1),
  sourceAt: ms.nonnegative(),
  // The choice names an older reply than the newest one.
  older: z.boolean(),
  values: z.record(z.string(), z.unknown()).optional(),
  at: ms.nonnegative(),
});
export type ChatUiChoiceOrigin = z.output<typeof ChatUiChoiceOriginSchema>;

export const ChatUiAnswerSchema = ChatUiChoiceOriginSchema.extend({
  queued: z.boolean(),
  turnId: z.string().min(1),
});
export type ChatUiAnswer = z.output<typeof ChatUiAnswerSchema>;

// Most refusals inside `ui.query` are readings, not wire errors.
export const ChatUiQueryReadingSchema = z.object({
  state: z.enum(['fresh', 'failed', 'refused']),
  value: z.unknown().optional(),
  // Names a fresh reading so a later `chat.uiChoice` can cite it.
  readId: z.string().optional(),
  readAt: ms.nonnegative(),
  reason: z.string().optional(),
});
export type ChatUiQueryReading = z.output<typeof ChatUiQueryReadingSchema>;

export const ChatUiQueryBlockStateSchema = z.object({
  revision: z.string(),
  readings: z.record(z.string(), ChatUiQueryReadingSchema),
  fallback: z.string(),
});
export type ChatUiQueryBlockState = z.output<typeof ChatUiQueryBlockStateSchema>;

export const ChatUiQueryStateSchema = z.object({
  authorChatId: z.string(),
  access: z.unknown().optional(),
  blocks: z.record(z.string(), ChatUiQueryBlockStateSchema),
});
export type ChatUiQueryState = z.output<typeof ChatUiQueryStateSchema>;

// ---------------------------------------------------------------------------
// Checkpoints

export const ChatFileChangeKindSchema = z.enum(['add', 'update', 'delete']);
export type ChatFileChangeKind = z.output<typeof ChatFileChangeKindSchema>;

export const ChatCheckpointFileSchema = z.object({
  path: z.string(),
  kind: ChatFileChangeKindSchema,
  added: count,
  deleted: count,
  // Unified; empty when omitted, and `omitted` says why.
  diff: z.string(),
  omitted: z.enum(['binary', 'too-large']).optional(),
});
export type ChatCheckpointFile = z.output<typeof ChatCheckpointFileSchema>;

export const ChatCheckpointDiffSchema = z.object({
  files: z.array(ChatCheckpointFileSchema),
  // More files changed than the list holds.
  truncated: z.boolean(),
});
export type ChatCheckpointDiff = z.output<typeof ChatCheckpointDiffSchema>;

// ---------------------------------------------------------------------------
// ChatInfo and its parts

// A usage limit or an overload is an `error` turn carrying this, never a state.
export const ChatTurnLimitSchema = z.object({
  kind: z.enum(['usage', 'overload']),
  // Absent: the CLI named no time.
  resetsAt: ms.optional(),
});
export type ChatTurnLimit = z.output<typeof ChatTurnLimitSchema>;

export const ChatQueuedMessageSchema = z.object({
  id: z.string().min(1),
  // The turn reserved for it; queues written before reservations lack it.
  turnId: z.string().min(1).optional(),
  text: z.string(),
  mentions: z.array(z.string()).optional(),
  skills: z.array(z.string()).optional(),
  chats: z.array(z.string()).optional(),
  attachments: z.array(ChatAttachmentSchema).optional(),
  createdAt: ms,
  uiChoice: ChatUiChoiceOriginSchema.optional(),
});
export type ChatQueuedMessage = z.output<typeof ChatQueuedMessageSchema>;

export const ChatBackgroundTaskSchema = z.object({
  // The CLI's own id; what stopping it names.
  id: z.string().min(1),
  kind: z.enum(['shell', 'monitor']),
  description: z.string(),
  command: z.string().nullable(),
  startedAt: ms,
});
export type ChatBackgroundTask = z.output<typeof ChatBackgroundTaskSchema>;

export const ChatContextBreakdownSchema = z.object({
  toolOutput: count,
  filesRead: count,
  conversation: count,
  system: count,
});
export type ChatContextBreakdown = z.output<typeof ChatContextBreakdownSchema>;

export const ChatUsageSchema = z.object({
  // Tokens of the last request, i.e. how full the context is now.
  contextTokens: count,
  contextWindow: z.int().positive().nullable(),
  costUsd: z.number().nonnegative(),
  turns: count,
  // An estimate scaled to sum to contextTokens.
  breakdown: ChatContextBreakdownSchema.optional(),
});
export type ChatUsage = z.output<typeof ChatUsageSchema>;

export const ChatAllowAlwaysSchema = z.object({
  label: z.string(),
  description: z.string(),
});
export type ChatAllowAlways = z.output<typeof ChatAllowAlwaysSchema>;

export const ChatQuestionChoiceSchema = z.object({
  // An answer is the chosen label, so labels are never cut.
  label: z.string(),
  description: z.string(),
});
export type ChatQuestionChoice = z.output<typeof ChatQuestionChoiceSchema>;

export const ChatQuestionSchema = z.object({
  id: z.string(),
  header: z.string(),
  question: z.string(),
  choices: z.array(ChatQuestionChoiceSchema),
  multiSelect: z.boolean(),
});
export type ChatQuestion = z.output<typeof ChatQuestionSchema>;

export const ChatRequestKindSchema = z.enum(['approval', 'question']);
export type ChatRequestKind = z.output<typeof ChatRequestKindSchema>;

// Texts here are cut by the host at CHAT_REQUEST_LIMITS; no schema maxima, so
// a host that cuts wrong cannot make a whole `chat.list` fail.
export const ChatRequestApprovalSchema = z.object({
  toolName: z.string(),
  // One line: the file, command, address or pattern; empty when there is none.
  subject: z.string(),
  description: z.string().nullable(),
  path: z.string().optional(),
  // Only when more than one file is touched.
  files: z.int().optional(),
  // Only `-`/`+` lines, no context.
  diff: z.string().optional(),
  command: z.string().optional(),
  // The diff or command was cut; the thread keeps the whole call.
  truncated: z.boolean().optional(),
  canAllowAlways: z.boolean(),
  allowAlways: ChatAllowAlwaysSchema.optional(),
});
export type ChatRequestApproval = z.output<typeof ChatRequestApprovalSchema>;

export const ChatRequestQuestionSchema = z.object({
  questions: z.array(ChatQuestionSchema),
  async: z.boolean().optional(),
});
export type ChatRequestQuestion = z.output<typeof ChatRequestQuestionSchema>;

// Nothing pairs `kind` with which part is present; readers check both.
export const ChatRequestSummarySchema = z.object({
  requestId: z.string(),
  // What `chat.dismiss` takes.
  itemId: z.string(),
  kind: ChatRequestKindSchema,
  createdAt: ms,
  approval: ChatRequestApprovalSchema.optional(),
  question: ChatRequestQuestionSchema.optional(),
});
export type ChatRequestSummary = z.output<typeof ChatRequestSummarySchema>;

export const ChatForkOfSchema = z.object({
  chatId: ChatIdSchema,
  turnId: z.string().min(1),
  at: ms,
});
export type ChatForkOf = z.output<typeof ChatForkOfSchema>;

// Tether addition: what a chat list row shows of the conversation, so a list needs no thread. The
// host sets it when a person's message is accepted and when an agent's reply (not a subagent's)
// completes: one line of plain text, whitespace collapsed, cut by the host to CHAT_LAST_LINE_LIMIT
// (not a schema maximum, as with the request summaries: a host that cuts wrong must not fail a list).
// It rides in ChatInfo, so `chat.status` keeps lists live and the relay's chat index keeps it for
// hosts that are away. The relay sees it in plain text, as it sees the thread and the title (see
// docs/security.md, "Who holds what"); content sealed end to end would have to seal it with them.
export const ChatLastLineSchema = z.object({
  role: z.enum(['user', 'assistant']),
  text: z.string(),
  // When the message was sent, or when the reply completed.
  at: ms,
});
export type ChatLastLine = z.output<typeof ChatLastLineSchema>;

// Optional arrays are absent on records written before they existed; read
// absent as empty.
export const ChatInfoSchema = z.object({
  chatId: ChatIdSchema,
  provider: AgentKindSchema,
  // Tether's addition: what the host calls the agent serving the chat (its provider's name, such as
  // "Demo agent (scripted)" for the stand-in, which has a real CLI's kind). Absent: its kind's name.
  agentName: z.string().min(1).max(100).optional(),
  // Absent = the CLI's default account.
  account: ProviderAccountIdSchema.optional(),
  cwd: z.string(),
  // Set once the CLI announced itself; what `--resume` needs.
  agentSessionId: z.string().nullable(),
  // What the CLI reported; may differ from the selection through an alias.
  model: z.string().nullable(),
  selection: ModelSelectionSchema,
  runtimeMode: RuntimeModeSchema,
  // What the running CLI confirmed; show this one when present.
  effectiveRuntimeMode: RuntimeModeSchema.optional(),
  permissionMode: z.string().optional(),
  status: AgentStatusSchema,
  // The process is alive; a live process can sit idle between turns.
  running: z.boolean(),
  activeTurnId: z.string().nullable(),
  slashCommands: z.array(z.string()),
  skills: z.array(z.string()).optional(),
  queue: z.array(ChatQueuedMessageSchema).optional(),
  queuePaused: z.boolean().optional(),
  background: z.array(ChatBackgroundTaskSchema).optional(),
  delegating: z.boolean().optional(),
  usage: ChatUsageSchema,
  suggestedTitle: SuggestedTitleSchema.optional(),
  // An inline-edit chat that lists skip.
  hidden: z.boolean().optional(),
  forkOf: ChatForkOfSchema.optional(),
  // Absent follows the machine-wide setting.
  resumeAtReset: z.boolean().optional(),
  // The limit the last turn stopped on, until the next turn opens.
  limit: ChatTurnLimitSchema.optional(),
  resumeAt: ms.optional(),
  // Waiting approvals and questions, oldest first; capped by the host, not here.
  requests: z.array(ChatRequestSummarySchema).optional(),
  lastLine: ChatLastLineSchema.optional(),
  createdAt: ms,
});
export type ChatInfo = z.output<typeof ChatInfoSchema>;

// ---------------------------------------------------------------------------
// Items

const itemBase = {
  id: z.string().min(1),
  createdAt: ms,
  // null outside a turn.
  turnId: z.string().nullable(),
};

export const ChatUserItemSchema = z.object({
  ...itemBase,
  kind: z.literal('user'),
  text: z.string(),
  // `@` file paths.
  mentions: z.array(z.string()).optional(),
  // `$` skills.
  skills: z.array(z.string()).optional(),
  chats: z.array(z.string()).optional(),
  attachments: z.array(ChatAttachmentSchema).optional(),
  uiChoice: ChatUiChoiceOriginSchema.optional(),
});
export type ChatUserItem = z.output<typeof ChatUserItemSchema>;

export const ChatAssistantItemSchema = z.object({
  ...itemBase,
  kind: z.literal('assistant'),
  text: z.string(),
  streaming: z.boolean(),
  ui: UiBlocksSchema.optional(),
  uiAnswers: z.record(z.string(), ChatUiAnswerSchema).optional(),
  uiQueries: ChatUiQueryStateSchema.optional(),
  // e.g. `commentary`, `final_answer`.
  phase: z.string().optional(),
  // Set = a subagent wrote it; draw it under that subagent's row.
  parentToolUseId: z.string().nullish(),
});
export type ChatAssistantItem = z.output<typeof ChatAssistantItemSchema>;

export const ChatThinkingItemSchema = z.object({
  ...itemBase,
  kind: z.literal('thinking'),
  text: z.string(),
  streaming: z.boolean(),
  // null while it runs.
  endedAt: ms.nullable(),
});
export type ChatThinkingItem = z.output<typeof ChatThinkingItemSchema>;

export const ChatToolStateSchema = z.enum(['running', 'done', 'error']);
export type ChatToolState = z.output<typeof ChatToolStateSchema>;

// Every key present; values are null until the CLI tells them.
export const ChatToolProgressSchema = z.object({
  startedAt: ms.nullable(),
  description: z.string().nullable(),
  // Streamed so far; the item's own `output` replaces it on settle.
  output: z.string().nullable(),
});
export type ChatToolProgress = z.output<typeof ChatToolProgressSchema>;

export const ChatFileChangeSchema = z.object({
  path: z.string(),
  kind: ChatFileChangeKindSchema,
  // Unified; empty for providers that report before/after instead.
  diff: z.string(),
});
export type ChatFileChange = z.output<typeof ChatFileChangeSchema>;

export const ChatSubagentStatusSchema = z.enum(['running', 'done', 'failed']);
export type ChatSubagentStatus = z.output<typeof ChatSubagentStatusSchema>;

export const ChatWorkflowPhaseSchema = z.object({
  index: z.int(),
  title: z.string(),
});
export type ChatWorkflowPhase = z.output<typeof ChatWorkflowPhaseSchema>;

export const ChatWorkflowAgentSchema = z.object({
  index: z.int(),
  label: z.string(),
  phaseIndex: z.int().nullable(),
  // null until it starts; then `workflowAgentRef(agentId)` reads its work.
  agentId: z.string().nullable(),
  status: ChatSubagentStatusSchema,
  startedAt: ms.nullable(),
  durationMs: count.nullable(),
  lastTool: z.string().nullable(),
});
export type ChatWorkflowAgent = z.output<typeof ChatWorkflowAgentSchema>;

// Replaced whole on each report.
export const ChatWorkflowSchema = z.object({
  name: z.string().nullable(),
  phases: z.array(ChatWorkflowPhaseSchema),
  agents: z.array(ChatWorkflowAgentSchema),
  taskId: z.string().optional(),
  lastProgressAt: ms.optional(),
  stalledAt: ms.optional(),
});
export type ChatWorkflow = z.output<typeof ChatWorkflowSchema>;

export const ChatToolItemSchema = z.object({
  ...itemBase,
  kind: z.literal('tool'),
  toolUseId: z.string(),
  name: z.string(),
  input: z.unknown().optional(),
  output: z.string().nullable(),
  state: ChatToolStateSchema,
  parentToolUseId: z.string().nullable(),
  progress: ChatToolProgressSchema.optional(),
  changes: z.array(ChatFileChangeSchema).optional(),
  workflow: ChatWorkflowSchema.optional(),
});
export type ChatToolItem = z.output<typeof ChatToolItemSchema>;

export const ChatSubagentUsageSchema = z.object({
  totalTokens: count,
  toolUses: count,
  durationMs: count,
});
export type ChatSubagentUsage = z.output<typeof ChatSubagentUsageSchema>;

export const ChatSubagentItemSchema = z.object({
  ...itemBase,
  kind: z.literal('subagent'),
  toolUseId: z.string(),
  description: z.string(),
  subagentType: z.string().nullable(),
  prompt: z.string().nullable(),
  background: z.boolean(),
  status: ChatSubagentStatusSchema,
  startedAt: ms,
  finishedAt: ms.nullable(),
  summary: z.string().nullable(),
  // The markdown report it handed back.
  result: z.string().nullable(),
  usage: ChatSubagentUsageSchema.nullable(),
  lastTool: z.string().nullable(),
  // The thread holds only the start; `chat.subagent` reads the rest.
  itemsTruncated: z.boolean(),
  model: z.string().optional(),
  outputFile: z.string().optional(),
  native: z.object({ agentId: z.string().optional(), threadId: z.string().optional() }).optional(),
  // Absent = native. `ruimte` (opened by a host task) is a legacy value kept
  // verbatim because records on disk carry it.
  origin: z.enum(['native', 'ruimte']).optional(),
  childId: z.string().optional(),
  // Plain optional here, unlike assistant items.
  parentToolUseId: z.string().optional(),
});
export type ChatSubagentItem = z.output<typeof ChatSubagentItemSchema>;

export const ChatApprovalDecisionSchema = z.enum(['pending', 'allow', 'allow-always', 'deny', 'cancelled']);
export type ChatApprovalDecision = z.output<typeof ChatApprovalDecisionSchema>;

export const ChatApprovalItemSchema = z.object({
  ...itemBase,
  kind: z.literal('approval'),
  requestId: z.string(),
  toolUseId: z.string().nullable(),
  toolName: z.string(),
  input: z.unknown().optional(),
  description: z.string().nullable(),
  // The CLI proposed a rule; only then may a client offer `allow-always`.
  canAllowAlways: z.boolean(),
  decision: ChatApprovalDecisionSchema,
  allowAlways: ChatAllowAlwaysSchema.optional(),
  // Tether addition: who answered (the person whose device signed the answer, as the host verified it;
  // the relay's word only on a host that takes approvals unsigned; shown, never trusted for anything)
  // and a denial's reason as the person wrote it, so every device's card can say both.
  answeredBy: z.string().optional(),
  reason: z.string().optional(),
});
export type ChatApprovalItem = z.output<typeof ChatApprovalItemSchema>;

export const ChatQuestionStateSchema = z.enum(['pending', 'answered', 'cancelled', 'dismissed']);
export type ChatQuestionState = z.output<typeof ChatQuestionStateSchema>;

export const ChatQuestionItemSchema = z.object({
  ...itemBase,
  kind: z.literal('question'),
  requestId: z.string(),
  questions: z.array(ChatQuestionSchema).min(1),
  // null until answered.
  answers: z.record(z.string(), z.string()).nullable(),
  state: ChatQuestionStateSchema,
  // Only an async question may be dismissed.
  async: z.boolean().optional(),
});
export type ChatQuestionItem = z.output<typeof ChatQuestionItemSchema>;

export const ChatTurnStateSchema = z.enum(['running', 'done', 'aborted', 'error']);
export type ChatTurnState = z.output<typeof ChatTurnStateSchema>;

export const ChatTurnItemSchema = z.object({
  ...itemBase,
  kind: z.literal('turn'),
  state: ChatTurnStateSchema,
  endedAt: ms.nullable(),
  costUsd: z.number().nonnegative(),
  // Absent = a person started it.
  origin: z.enum(['user', 'agent']).optional(),
  label: z.string().optional(),
  taskToolUseId: z.string().optional(),
  // Git tree at the start of the turn.
  checkpoint: z.string().optional(),
  checkpointDiff: ChatCheckpointDiffSchema.optional(),
  // Absent = it ran on one process.
  attempt: z.int().positive().optional(),
  resumePending: z.boolean().optional(),
  deliveryPending: z.boolean().optional(),
  taskIds: z.array(z.string()).optional(),
  messageFrom: z.array(z.string()).optional(),
  native: z.object({ turnId: z.string().optional(), lastUuid: z.string().optional() }).optional(),
  // Git tree once it settled.
  checkpointAfter: z.string().optional(),
  summaryFor: ChatIdSchema.optional(),
  limit: ChatTurnLimitSchema.optional(),
});
export type ChatTurnItem = z.output<typeof ChatTurnItemSchema>;

export const ChatNoteLevelSchema = z.enum(['info', 'warning', 'error']);
export type ChatNoteLevel = z.output<typeof ChatNoteLevelSchema>;

export const ChatNoteItemSchema = z.object({
  ...itemBase,
  kind: z.literal('note'),
  level: ChatNoteLevelSchema,
  text: z.string(),
  // The chat a delivered summary came from.
  from: ChatIdSchema.optional(),
});
export type ChatNoteItem = z.output<typeof ChatNoteItemSchema>;

export const ChatCompactionItemSchema = z.object({
  ...itemBase,
  kind: z.literal('compaction'),
  // null when the CLI did not say.
  preTokens: count.nullable(),
});
export type ChatCompactionItem = z.output<typeof ChatCompactionItemSchema>;

export const ChatItemSchema = z.discriminatedUnion('kind', [
  ChatUserItemSchema,
  ChatAssistantItemSchema,
  ChatThinkingItemSchema,
  ChatToolItemSchema,
  ChatSubagentItemSchema,
  ChatApprovalItemSchema,
  ChatQuestionItemSchema,
  ChatTurnItemSchema,
  ChatNoteItemSchema,
  ChatCompactionItemSchema,
]);
export type ChatItem = z.output<typeof ChatItemSchema>;
export type ChatItemKind = ChatItem['kind'];

// The `input` of a tool named `ImageGeneration`. Bytes never enter an item.
export const GeneratedImageInputSchema = z.object({
  attachment: ChatAttachmentSchema.optional(),
  revisedPrompt: z.string().optional(),
  transparentBackground: z.boolean().optional(),
});
export type GeneratedImageInput = z.output<typeof GeneratedImageInputSchema>;

/** The stored image an `ImageGeneration` call produced, or null for anything else. */
export function generatedImageAttachment(item: ChatItem): ChatAttachment | null {
  if (item.kind !== 'tool' || item.name !== 'ImageGeneration') return null;
  const input = GeneratedImageInputSchema.safeParse(item.input);
  return input.success ? (input.data.attachment ?? null) : null;
}

// ---------------------------------------------------------------------------
// Thread events (apply after the attach snapshot)

export const ChatItemEventSchema = z.object({
  type: z.literal('item'),
  // Insert, or replace the item with the same id.
  item: ChatItemSchema,
  // Where it goes in a paged thread.
  historyIndex: count.optional(),
});
export type ChatItemEvent = z.output<typeof ChatItemEventSchema>;

// Appends `text` to a reply, thought or running tool output. A UI streaming
// preview is a delta with empty text plus `ui` and `textLength`; it is never
// logged and carries no envelope `seq`.
export const ChatDeltaEventSchema = z.object({
  type: z.literal('delta'),
  itemId: z.string(),
  text: z.string(),
  ui: UiBlocksSchema.optional(),
  uiQueries: ChatUiQueryStateSchema.optional(),
  textLength: count.optional(),
});
export type ChatDeltaEvent = z.output<typeof ChatDeltaEventSchema>;

export const ChatInfoEventSchema = z.object({
  type: z.literal('info'),
  info: ChatInfoSchema,
});
export type ChatInfoEvent = z.output<typeof ChatInfoEventSchema>;

// Replaces info and the whole thread; never append it.
export const ChatResetEventSchema = z.object({
  type: z.literal('reset'),
  info: ChatInfoSchema,
  items: z.array(ChatItemSchema),
});
export type ChatResetEvent = z.output<typeof ChatResetEventSchema>;

export const ChatEventSchema = z.discriminatedUnion('type', [ChatItemEventSchema, ChatDeltaEventSchema, ChatInfoEventSchema, ChatResetEventSchema]);
export type ChatEvent = z.output<typeof ChatEventSchema>;

export const ChatEventEnvelopeSchema = z.object({
  chatId: ChatIdSchema,
  event: ChatEventSchema,
  // Log position; a client keeps the last one for `chat.attach` `since`.
  seq: z.int().positive().optional(),
});
export type ChatEventEnvelope = z.output<typeof ChatEventEnvelopeSchema>;

// Goes to every client, attached or not.
export const ChatStatusEventSchema = z.object({
  chatId: ChatIdSchema,
  info: ChatInfoSchema,
});
export type ChatStatusEvent = z.output<typeof ChatStatusEventSchema>;

// Carries no conversation: the watcher fetches the page again.
export const ChatSubagentChangedEventSchema = z.object({
  chatId: ChatIdSchema,
  toolUseId: z.string(),
});
export type ChatSubagentChangedEvent = z.output<typeof ChatSubagentChangedEventSchema>;

// ---------------------------------------------------------------------------
// Bookmarks

export const ChatBookmarkSchema = z.object({
  itemId: z.string().min(1),
  // Absent = unnamed; lists show the excerpt.
  name: z.string().max(CHAT_BOOKMARK_LIMITS.name).optional(),
  excerpt: z.string().max(CHAT_BOOKMARK_LIMITS.excerpt),
  createdAt: ms,
});
export type ChatBookmark = z.output<typeof ChatBookmarkSchema>;

export const ChatBookmarksSchema = z.array(ChatBookmarkSchema);
export type ChatBookmarks = z.output<typeof ChatBookmarksSchema>;

// Whole list after every change.
export const ChatBookmarksEventSchema = z.object({
  chatId: ChatIdSchema,
  bookmarks: ChatBookmarksSchema,
});
export type ChatBookmarksEvent = z.output<typeof ChatBookmarksEventSchema>;

export const ChatVisualsEventSchema = z.object({
  chatId: ChatIdSchema,
  visuals: ChatVisualsSchema,
});
export type ChatVisualsEvent = z.output<typeof ChatVisualsEventSchema>;

// ---------------------------------------------------------------------------
// Request payloads

export const ChatTargetPayloadSchema = z.object({
  chatId: ChatIdSchema,
});
export type ChatTargetPayload = z.output<typeof ChatTargetPayloadSchema>;

export const ChatForkWorktreeSchema = z.object({
  // Absent = a branch named after the title.
  branch: z.string().trim().min(1).max(120).optional(),
});
export type ChatForkWorktree = z.output<typeof ChatForkWorktreeSchema>;

export const ChatCreatePayloadSchema = z.object({
  chatId: ChatIdSchema,
  provider: AgentKindSchema.optional(),
  account: ProviderAccountIdSchema.optional(),
  cwd: z.string().optional(),
  // A CLI session id to continue, e.g. one opened in a terminal.
  resume: AgentSessionIdSchema.optional(),
  selection: ModelSelectionSchema.optional(),
  runtimeMode: RuntimeModeSchema.optional(),
  // Tether addition: start in a new git worktree of `cwd`'s repository, on a new branch from its HEAD.
  worktree: ChatForkWorktreeSchema.optional(),
});
export type ChatCreatePayload = z.output<typeof ChatCreatePayloadSchema>;

export const ChatConfigurePayloadSchema = z.object({
  chatId: ChatIdSchema,
  // Only an account that can read this conversation (same CLI, same transcripts).
  account: ProviderAccountIdSchema.optional(),
  selection: ModelSelectionSchema.optional(),
  runtimeMode: RuntimeModeSchema.optional(),
  resumeAtReset: z.boolean().optional(),
});
export type ChatConfigurePayload = z.output<typeof ChatConfigurePayloadSchema>;

// Per connection, not per chat: the composer's current picks.
export const ChatPreferencesPayloadSchema = z.object({
  runtimeMode: RuntimeModeSchema.optional(),
  terminalRuntimeMode: RuntimeModeSchema.optional(),
  selections: z.partialRecord(AgentKindSchema, ModelSelectionSchema).optional(),
  accounts: z.partialRecord(AgentKindSchema, ProviderAccountIdSchema).optional(),
  // Absent = older than any pick, so it never overrides one.
  changedAt: ms.nonnegative().optional(),
});
export type ChatPreferencesPayload = z.output<typeof ChatPreferencesPayloadSchema>;

export const ChatClearPayloadSchema = ChatTargetPayloadSchema.extend({
  // Clear even during a turn (else `chat-busy`).
  force: z.boolean().optional(),
});
export type ChatClearPayload = z.output<typeof ChatClearPayloadSchema>;

export const ChatCancelPayloadSchema = ChatTargetPayloadSchema.extend({
  // Also mark the CLI's own subagents stopped.
  subagents: z.boolean().optional(),
});
export type ChatCancelPayload = z.output<typeof ChatCancelPayloadSchema>;

export const ChatAttachPayloadSchema = ChatTargetPayloadSchema.extend({
  historyLimit: pageSize.optional(),
  // The last seq the client applied; the host replays after it if it can.
  since: count.optional(),
});
export type ChatAttachPayload = z.output<typeof ChatAttachPayloadSchema>;

export const ChatHistoryPayloadSchema = ChatTargetPayloadSchema.extend({
  // Opaque; handed back exactly as `history.cursor` gave it.
  cursor: z.string().min(1).max(CHAT_PAGE_LIMITS.historyCursor),
  limit: pageSize.optional(),
});
export type ChatHistoryPayload = z.output<typeof ChatHistoryPayloadSchema>;

export const ChatSubagentPayloadSchema = ChatTargetPayloadSchema.extend({
  // The Agent call id, or `workflowAgentRef(agentId)` for a workflow's agent.
  toolUseId: z.string().min(1).max(CHAT_PAGE_LIMITS.subagentRef),
  cursor: z.string().min(1).max(CHAT_PAGE_LIMITS.subagentCursor).optional(),
  limit: pageSize.optional(),
  // true holds a watch, false releases it, absent leaves it as it is.
  watch: z.boolean().optional(),
});
export type ChatSubagentPayload = z.output<typeof ChatSubagentPayloadSchema>;

export const ChatStopSubagentPayloadSchema = ChatTargetPayloadSchema.extend({
  toolUseId: z.string().min(1).max(CHAT_PAGE_LIMITS.subagentRef),
});
export type ChatStopSubagentPayload = z.output<typeof ChatStopSubagentPayloadSchema>;

export const ChatStopTaskPayloadSchema = ChatTargetPayloadSchema.extend({
  taskId: z.string().min(1).max(CHAT_PAGE_LIMITS.subagentRef),
});
export type ChatStopTaskPayload = z.output<typeof ChatStopTaskPayloadSchema>;

// `steer` hands the message to the running turn; `queue` waits for it to settle.
export const ChatDeliverySchema = z.enum(['steer', 'queue']);
export type ChatDelivery = z.output<typeof ChatDeliverySchema>;

export const ChatSendPayloadSchema = z
  .object({
    chatId: ChatIdSchema,
    // No maximum: the transport frame is the only bound.
    text: z.string(),
    delivery: ChatDeliverySchema.optional(),
    mentions: z.array(z.string().min(1)).max(CHAT_SEND_LIMITS.mentions).optional(),
    skills: z.array(z.string().min(1)).max(CHAT_SEND_LIMITS.skills).optional(),
    chats: z.array(ChatIdSchema).max(CHAT_SEND_LIMITS.chats).optional(),
    attachments: ChatAttachmentUploadsSchema.optional(),
  })
  .refine((message) => message.text.trim() !== '' || (message.attachments?.length ?? 0) > 0, 'A message needs text or an attachment');
export type ChatSendPayload = z.output<typeof ChatSendPayloadSchema>;

const uiRef = {
  chatId: ChatIdSchema,
  itemId: z.string().min(1).max(256),
  blockId: z.string().min(1).max(256),
  revision: z.string().min(1).max(128),
};
const uiValues = z.record(z.string().max(128), z.unknown());

// Only ids travel; the host looks the choice up in its stored block revision.
export const ChatUiChoicePayloadSchema = z.object({
  ...uiRef,
  choiceId: z.string().min(1).max(256),
  // Read ids of the readings the client displayed; a stale one is refused.
  reads: z.record(z.string().max(128), z.string().max(128)).optional(),
  values: uiValues.optional(),
});
export type ChatUiChoicePayload = z.output<typeof ChatUiChoicePayloadSchema>;

// Names a query the block declared; a client never supplies a source or arguments.
export const ChatUiQueryPayloadSchema = z.object({
  ...uiRef,
  query: z.string().min(1).max(128),
  values: uiValues.optional(),
});
export type ChatUiQueryPayload = z.output<typeof ChatUiQueryPayloadSchema>;

// For `chat.unqueue` and `chat.sendNow`.
export const ChatQueuePayloadSchema = z.object({
  chatId: ChatIdSchema,
  messageId: z.string().min(1),
});
export type ChatQueuePayload = z.output<typeof ChatQueuePayloadSchema>;

export const ChatApproveDecisionSchema = z.enum(['allow', 'allow-always', 'deny']);
export type ChatApproveDecision = z.output<typeof ChatApproveDecisionSchema>;

export const ChatApprovePayloadSchema = z.object({
  chatId: ChatIdSchema,
  requestId: z.string().min(1),
  decision: ChatApproveDecisionSchema,
  // A reason; reaches the agent only when the provider can carry it (`denyReason`).
  message: z.string().optional(),
});
export type ChatApprovePayload = z.output<typeof ChatApprovePayloadSchema>;

export const ChatAnswerPayloadSchema = z.object({
  chatId: ChatIdSchema,
  requestId: z.string().min(1),
  // Question id → answer; a chosen choice's answer is its label.
  answers: z.record(z.string(), z.string()),
});
export type ChatAnswerPayload = z.output<typeof ChatAnswerPayloadSchema>;

// Takes the item id, not the request id; only async questions can be dismissed.
export const ChatDismissPayloadSchema = z.object({
  chatId: ChatIdSchema,
  itemId: z.string().min(1),
});
export type ChatDismissPayload = z.output<typeof ChatDismissPayloadSchema>;

export const ChatTurnDiffPayloadSchema = z.object({
  chatId: ChatIdSchema,
  turnId: z.string().min(1),
});
export type ChatTurnDiffPayload = z.output<typeof ChatTurnDiffPayloadSchema>;

export const ChatForkInfoPayloadSchema = ChatTurnDiffPayloadSchema;
export type ChatForkInfoPayload = z.output<typeof ChatForkInfoPayloadSchema>;

// A new chat continuing after `turnId`, with the history up to and including it.
export const ChatForkPayloadSchema = z.object({
  chatId: ChatIdSchema,
  turnId: z.string().min(1),
  title: z.string().trim().min(1).max(CHAT_FORK_TITLE_MAX).optional(),
  viewId: z.string().min(1).optional(),
  asView: z.boolean().optional(),
  worktree: ChatForkWorktreeSchema.optional(),
  // Worktree files as they were after the turn, not the branch HEAD.
  filesAfterTurn: z.boolean().optional(),
  // Another CLI gets the conversation as text.
  provider: AgentKindSchema.optional(),
  // Absent = the newest composer pick.
  selection: ModelSelectionSchema.optional(),
  // Absent = the original's (same CLI).
  account: ProviderAccountIdSchema.optional(),
});
export type ChatForkPayload = z.output<typeof ChatForkPayloadSchema>;

// Moves a chat that stopped on a limit to another account of its CLI.
export const ChatContinueOnPayloadSchema = z.object({
  chatId: ChatIdSchema,
  account: ProviderAccountIdSchema,
});
export type ChatContinueOnPayload = z.output<typeof ChatContinueOnPayloadSchema>;

export const ChatSummarizePayloadSchema = ChatTargetPayloadSchema;
export type ChatSummarizePayload = z.output<typeof ChatSummarizePayloadSchema>;

export const SkillsListPayloadSchema = ChatTargetPayloadSchema;
export type SkillsListPayload = z.output<typeof SkillsListPayloadSchema>;

export const ChatAddBookmarkPayloadSchema = ChatTargetPayloadSchema.extend({
  itemId: z.string().min(1),
  name: z.string().max(CHAT_BOOKMARK_LIMITS.name).optional(),
});
export type ChatAddBookmarkPayload = z.output<typeof ChatAddBookmarkPayloadSchema>;

export const ChatRenameBookmarkPayloadSchema = ChatTargetPayloadSchema.extend({
  itemId: z.string().min(1),
  // Required; an empty name removes the name.
  name: z.string().max(CHAT_BOOKMARK_LIMITS.name),
});
export type ChatRenameBookmarkPayload = z.output<typeof ChatRenameBookmarkPayloadSchema>;

export const ChatRemoveBookmarkPayloadSchema = ChatTargetPayloadSchema.extend({
  itemId: z.string().min(1),
});
export type ChatRemoveBookmarkPayload = z.output<typeof ChatRemoveBookmarkPayloadSchema>;

export const ChatRemoveVisualPayloadSchema = ChatTargetPayloadSchema.extend({
  visualId: z.string().min(1),
});
export type ChatRemoveVisualPayload = z.output<typeof ChatRemoveVisualPayloadSchema>;

// ---------------------------------------------------------------------------
// Request results

export const ChatHistoryPageSchema = z.object({
  start: count,
  // null = no older page.
  cursor: z.string().nullable(),
});
export type ChatHistoryPage = z.output<typeof ChatHistoryPageSchema>;

export const ChatHistoryResultSchema = z.object({
  items: z.array(ChatItemSchema),
  history: ChatHistoryPageSchema,
});
export type ChatHistoryResult = z.output<typeof ChatHistoryResultSchema>;

// A snapshot replaces the client's thread. With a honoured `since`, `items`
// is empty and `events` carries what was missed instead.
export const ChatAttachResultSchema = z.object({
  info: ChatInfoSchema,
  items: z.array(ChatItemSchema),
  history: ChatHistoryPageSchema.optional(),
  // Every still-waiting request, wherever it sits in the thread.
  pending: z.array(ChatItemSchema).optional(),
  seq: count.optional(),
  events: z.array(ChatEventSchema).optional(),
  // Absent: the host keeps no bookmarks / visuals.
  bookmarks: ChatBookmarksSchema.optional(),
  visuals: ChatVisualsSchema.optional(),
});
export type ChatAttachResult = z.output<typeof ChatAttachResultSchema>;

export const ChatSendResultSchema = z.object({
  queued: z.boolean(),
  // Older daemons omit it.
  turnId: z.string().min(1).optional(),
});
export type ChatSendResult = z.output<typeof ChatSendResultSchema>;

export const ChatUnqueueResultSchema = z.object({
  // Older daemons answer `{}`.
  message: ChatQueuedMessageSchema.optional(),
});
export type ChatUnqueueResult = z.output<typeof ChatUnqueueResultSchema>;

export const ChatTurnDiffResultSchema = z.object({
  // null: no checkpoint, no repository, or git could not be read.
  diff: ChatCheckpointDiffSchema.nullable(),
});
export type ChatTurnDiffResult = z.output<typeof ChatTurnDiffResultSchema>;

export const ChatForkResultSchema = z.object({
  info: ChatInfoSchema,
  nodeId: z.string(),
  // The canvas it landed on, or the fork's own view (whose id is nodeId).
  viewId: z.string(),
  // null: no line could be drawn.
  edgeId: z.string().nullable(),
  worktree: WorktreeSchema.optional(),
});
export type ChatForkResult = z.output<typeof ChatForkResultSchema>;

export const ChatContinueOnResultSchema = z.object({
  // This chat, or the fork it went on in.
  chatId: ChatIdSchema,
  fork: ChatForkResultSchema.optional(),
});
export type ChatContinueOnResult = z.output<typeof ChatContinueOnResultSchema>;

export const ChatSummarizeResultSchema = z.object({
  // The turn the fork writes its summary in.
  turnId: z.string(),
});
export type ChatSummarizeResult = z.output<typeof ChatSummarizeResultSchema>;

export const ChatForkInfoResultSchema = z.object({
  repository: z.boolean(),
  branches: z.array(z.string()),
  // A free name to suggest.
  branch: z.string().nullable(),
  filesAfterTurn: z.boolean(),
});
export type ChatForkInfoResult = z.output<typeof ChatForkInfoResultSchema>;

export const ChatSubagentPageSchema = z.object({
  // Absent for Codex threads.
  start: count.optional(),
  cursor: z.string().nullable(),
});
export type ChatSubagentPage = z.output<typeof ChatSubagentPageSchema>;

export const ChatSubagentSourceSchema = z.enum(['claude-transcript', 'codex-thread']);
export type ChatSubagentSource = z.output<typeof ChatSubagentSourceSchema>;

export const ChatSubagentContextSchema = z.object({
  provider: AgentKindSchema,
  cwd: z.string(),
  chatId: ChatIdSchema.optional(),
});
export type ChatSubagentContext = z.output<typeof ChatSubagentContextSchema>;

export const ChatSubagentResultSchema = z.object({
  items: z.array(ChatItemSchema),
  history: ChatSubagentPageSchema,
  source: ChatSubagentSourceSchema,
  context: ChatSubagentContextSchema.optional(),
  // The CLI is still writing it.
  live: z.boolean(),
});
export type ChatSubagentResult = z.output<typeof ChatSubagentResultSchema>;

export const ChatSkillSourceSchema = z.enum(['user', 'project', 'plugin']);
export type ChatSkillSource = z.output<typeof ChatSkillSourceSchema>;

export const ChatSkillSchema = z.object({
  name: z.string().min(1),
  description: z.string(),
  source: ChatSkillSourceSchema,
});
export type ChatSkill = z.output<typeof ChatSkillSchema>;

export const SkillsListResultSchema = z.object({
  skills: z.array(ChatSkillSchema),
});
export type SkillsListResult = z.output<typeof SkillsListResultSchema>;

export const ChatBookmarksResultSchema = z.object({
  bookmarks: ChatBookmarksSchema,
});
export type ChatBookmarksResult = z.output<typeof ChatBookmarksResultSchema>;

export const ChatVisualsResultSchema = z.object({
  visuals: ChatVisualsSchema,
});
export type ChatVisualsResult = z.output<typeof ChatVisualsResultSchema>;

export const ChatListResultSchema = z.object({
  chats: z.array(ChatInfoSchema),
});
export type ChatListResult = z.output<typeof ChatListResultSchema>;
