// Limits shared by the schemas and by whoever cuts text before it goes out.
// Counts are UTF-16 code units unless a name says bytes or lines.

export const CHAT_ATTACHMENTS_MAX_COUNT = 8;

// Decoded bytes. 10 MiB of base64 plus a prompt and the envelope still fits a
// 16 MiB transport frame; the port enforces no frame size itself.
export const CHAT_ATTACHMENT_MAX_BYTES = 10 * 1024 * 1024;
export const CHAT_ATTACHMENTS_MAX_BYTES = CHAT_ATTACHMENT_MAX_BYTES;

// Where a host cuts the texts of a ChatRequestSummary. Deliberately not schema
// maxima: a host that cuts wrong must never make a whole `chat.list` fail.
// Choice labels and question ids are never cut (an answer is a label).
export const CHAT_REQUEST_LIMITS = {
  perChat: 8,
  subject: 200,
  description: 300,
  command: 1000,
  commandLines: 12,
  diff: 1500,
  diffLines: 12,
  question: 500,
  header: 100,
  choiceDescription: 200,
} as const;

export const CHAT_BOOKMARK_LIMITS = {
  name: 120,
  excerpt: 160,
  perChat: 200,
} as const;

export const CHAT_FORK_TITLE_MAX = 120;

export const SUGGESTED_TITLE_LIMIT = 80;

// ChatInfo.lastLine's text: about two phone lines' worth, more than a desktop row shows.
export const CHAT_LAST_LINE_LIMIT = 160;

// Caps on the lists a single `chat.send` may carry.
export const CHAT_SEND_LIMITS = {
  mentions: 64,
  skills: 16,
  chats: 16,
} as const;

// Page sizes and opaque cursor lengths for `chat.attach`, `chat.history` and `chat.subagent`.
export const CHAT_PAGE_LIMITS = {
  pageMax: 100,
  historyCursor: 128,
  subagentCursor: 256,
  subagentRef: 256,
} as const;
