// A chat exported as a transcript: one JSON document in the ChatTranscript shape other chat tools
// read (snake_case; see ../shared/seeds/chat-transcript-reference.txt): the chat, its tool policy,
// tool activities, notices, messages split into blocks, usage per turn, and attachments. How a
// Tether thread maps onto it (src/client/transcript.ts):
//   user, assistant items   → `messages` (one each), their markdown split into `blocks`
//   thinking items          → `blocks` of kind `thinking`, under the turn's reply
//   tool, subagent, approval, question items → `tool_activities`
//   note, compaction items  → `notices`
//   turn items              → `usage` (cost, duration, the limit it hit) and the state of the turn's replies
//   user attachments        → `attachments`
import { z } from 'zod';

const ms = z.number();
const id = z.string().min(1);

export const TranscriptChatSchema = z.object({
  id,
  title: z.string(),
  private: z.boolean(),
  current_model: z.object({
    provider: z.string(),
    requested_model: z.string(),
    default_reasoning: z.string(),
  }),
  /** A fork: the chat and the turn it continues after. */
  branched_from: z.object({ chat_id: id, through_message_id: id }).nullable(),
  agent_working_folder: z.string(),
  /** The runtime mode (`src/contracts/model.ts`). */
  agent_mode: z.string(),
  agent_fast: z.boolean(),
  pinned_at: ms.nullable(),
  /** The provider account the chat runs on; null for the CLI's default. */
  profile_id: z.string().nullable(),
  created_at: ms,
  updated_at: ms,
});
export type TranscriptChat = z.output<typeof TranscriptChatSchema>;

export const TranscriptToolPolicySchema = z.object({
  chat_id: id,
  mode: z.string(),
  workspace_ids: z.array(z.string()),
});

export const TranscriptToolActivitySchema = z.object({
  id,
  chat_id: id,
  /** The reply of the same turn it belongs beside; null when the turn has none. */
  message_id: z.string().nullable(),
  turn_id: z.string().nullable(),
  kind: z.enum(['tool', 'subagent', 'approval', 'question']),
  tool_use_id: z.string().nullable(),
  /** Set when a subagent made the call. */
  parent_tool_use_id: z.string().nullable(),
  name: z.string(),
  /** The tool's state, the subagent's status, the approval's decision or the question's state. */
  state: z.string(),
  input: z.unknown(),
  output: z.string().nullable(),
  changes: z.array(z.object({ path: z.string(), kind: z.string(), diff: z.string() })),
  /** A question's answers, question id → answer. */
  answers: z.record(z.string(), z.string()).nullable(),
  created_at: ms,
  completed_at: ms.nullable(),
});
export type TranscriptToolActivity = z.output<typeof TranscriptToolActivitySchema>;

export const TranscriptNoticeSchema = z.object({
  id,
  /** The turn it came in. */
  attempt_id: z.string().nullable(),
  chat_id: id,
  assistant_message_id: z.string().nullable(),
  text: z.string(),
  text_offset: z.int().nonnegative(),
  created_at: ms,
  level: z.enum(['info', 'warning', 'error']),
  kind: z.enum(['note', 'compaction']),
});
export type TranscriptNotice = z.output<typeof TranscriptNoticeSchema>;

export const TranscriptMessageSchema = z.object({
  id,
  chat_id: id,
  ordinal: z.int().nonnegative(),
  role: z.enum(['user', 'assistant']),
  state: z.enum(['pending', 'streaming', 'complete', 'error', 'cancelled']),
  markdown: z.string(),
  /** A reply's: the person's message that started its turn. */
  origin_message_id: z.string().nullable(),
  provider: z.string(),
  requested_model: z.string(),
  resolved_model: z.string().nullable(),
  /** Why its turn failed: `usage-limit`, `overload`, `error`, or null. */
  error_class: z.string().nullable(),
  created_at: ms,
  completed_at: ms.nullable(),
  /** Set when a subagent wrote it. */
  parent_tool_use_id: z.string().nullable(),
});
export type TranscriptMessage = z.output<typeof TranscriptMessageSchema>;

export const TranscriptBlockSchema = z.object({
  id,
  message_id: z.string().nullable(),
  ordinal: z.int().nonnegative(),
  kind: z.enum(['paragraph', 'heading', 'code', 'list', 'quote', 'table', 'rule', 'html', 'thinking']),
  markdown: z.string(),
  plain_text: z.string(),
});
export type TranscriptBlock = z.output<typeof TranscriptBlockSchema>;

export const TranscriptUsageSchema = z.object({
  /** The turn's last reply, if it has one. */
  message_id: z.string().nullable(),
  turn_id: id,
  state: z.string(),
  cost_usd: z.number().nonnegative(),
  started_at: ms,
  ended_at: ms.nullable(),
  duration_ms: z.number().nonnegative().nullable(),
  limit: z.object({ kind: z.string(), resets_at: ms.nullable() }).nullable(),
});
export type TranscriptUsage = z.output<typeof TranscriptUsageSchema>;

export const TranscriptAttachmentSchema = z.object({
  id,
  chat_id: id,
  message_id: id,
  ordinal: z.int().nonnegative(),
  name: z.string(),
  mime: z.string(),
  size: z.int().nonnegative(),
  /** Where the host stored it, on the host's machine. */
  path: z.string(),
  width: z.int().positive().nullable(),
  height: z.int().positive().nullable(),
});
export type TranscriptAttachment = z.output<typeof TranscriptAttachmentSchema>;

export const TranscriptAgentCommandSchema = z.object({
  name: z.string(),
  description: z.string(),
  display_name: z.string(),
  kind: z.string(),
  input_hint: z.string(),
});

export const ChatTranscriptSchema = z.object({
  chat: TranscriptChatSchema,
  tool_policy: TranscriptToolPolicySchema,
  tool_activities: z.array(TranscriptToolActivitySchema).default([]),
  notices: z.array(TranscriptNoticeSchema).default([]),
  messages: z.array(TranscriptMessageSchema),
  blocks: z.array(TranscriptBlockSchema),
  /** Tether chats pin no documents; kept for the shape. */
  pinned_documents: z.array(z.unknown()),
  feedback: z.array(z.unknown()).default([]),
  usage: z.array(TranscriptUsageSchema).default([]),
  sources: z.array(z.unknown()).default([]),
  reasoning_control: z.object({ kind: z.string() }).nullable().optional(),
  agent_commands: z.array(TranscriptAgentCommandSchema).nullable().optional(),
  attachments: z.array(TranscriptAttachmentSchema).default([]),
});
export type ChatTranscript = z.output<typeof ChatTranscriptSchema>;
