import { z } from 'zod';
import { SUGGESTED_TITLE_LIMIT } from './limits.ts';

// Terminal-agent contracts. They live outside the request and event tables on
// purpose: a host composes them into its own protocol.

export const AgentKindSchema = z.enum(['claude', 'codex', 'gemini', 'copilot', 'apple']);
export type AgentKind = z.output<typeof AgentKindSchema>;

// `exited` is the host's own reading: the CLI died without reporting an end.
export const AgentStatusSchema = z.enum(['running', 'needs-you', 'idle', 'error', 'exited']);
export type AgentStatus = z.output<typeof AgentStatusSchema>;

export const SessionIdSchema = z.string().min(1);
export type SessionId = z.output<typeof SessionIdSchema>;

// A CLI's own conversation id, as a client names one to continue (`chat.create
// {resume}`). It reaches the CLI's command line or its protocol, so it is a
// letter or digit, then letters, digits or . _ : - (never a flag, a path or a
// word a shell splits). Each host backend checks its own, narrower shape too.
export const AGENT_SESSION_ID_MAX = 128;
export const AgentSessionIdSchema = z
  .string()
  .max(AGENT_SESSION_ID_MAX)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'Expected a CLI session id: a letter or digit, then letters, digits or . _ : -');
export type AgentSessionId = z.output<typeof AgentSessionIdSchema>;

// A model wrote it, so clients show it as plain text only.
export const SuggestedTitleSchema = z.string().min(1).max(SUGGESTED_TITLE_LIMIT);
export type SuggestedTitle = z.output<typeof SuggestedTitleSchema>;

export const AgentRequestKindSchema = z.enum(['approval', 'question']);
export type AgentRequestKind = z.output<typeof AgentRequestKindSchema>;

export const AgentRequestSchema = z.object({
  id: z.string().min(1),
  source: z.string(),
  kind: AgentRequestKindSchema,
  toolName: z.string(),
  title: z.string().nullable(),
  text: z.string(),
  createdAt: z.number(),
});
export type AgentRequest = z.output<typeof AgentRequestSchema>;

export const AgentInfoSchema = z.object({
  kind: AgentKindSchema,
  agentSessionId: z.string().min(1),
  transcriptPath: z.string().nullable(),
  status: AgentStatusSchema,
  // False after a host restart: the session can only be resumed, not watched.
  live: z.boolean(),
  updatedAt: z.number(),
  suggestedTitle: SuggestedTitleSchema.optional(),
  requests: z.array(AgentRequestSchema).optional(),
});
export type AgentInfo = z.output<typeof AgentInfoSchema>;

// `agent: null` = the terminal no longer runs an agent.
export const SessionStatusEventSchema = z.object({
  sessionId: SessionIdSchema,
  agent: AgentInfoSchema.nullable(),
});
export type SessionStatusEvent = z.output<typeof SessionStatusEventSchema>;

export const AgentResumePayloadSchema = z.object({
  sessionId: SessionIdSchema,
});
export type AgentResumePayload = z.output<typeof AgentResumePayloadSchema>;

// A `remember` choice exists only when the CLI offered a rule to remember.
export const ApprovalChoiceKindSchema = z.enum(['allow', 'remember', 'deny']);
export type ApprovalChoiceKind = z.output<typeof ApprovalChoiceKindSchema>;

export const ApprovalChoiceSchema = z.object({
  id: z.string().min(1),
  kind: ApprovalChoiceKindSchema,
  label: z.string().min(1),
});
export type ApprovalChoice = z.output<typeof ApprovalChoiceSchema>;

// The CLI asks in its own prompt at the same time; the first answer wins.
export const ApprovalRequestSchema = z.object({
  requestId: z.string().min(1),
  sessionId: SessionIdSchema,
  toolName: z.string().min(1),
  summary: z.string(),
  choices: z.array(ApprovalChoiceSchema).min(1),
  createdAt: z.number(),
  expiresAt: z.number(),
});
export type ApprovalRequest = z.output<typeof ApprovalRequestSchema>;

// Always the whole pending list, so a client replaces rather than merges.
export const SessionApprovalsEventSchema = z.object({
  sessionId: SessionIdSchema,
  approvals: z.array(ApprovalRequestSchema),
});
export type SessionApprovalsEvent = z.output<typeof SessionApprovalsEventSchema>;

export const ApprovalAnswerPayloadSchema = z.object({
  sessionId: SessionIdSchema,
  requestId: z.string().min(1),
  choiceId: z.string().min(1),
});
export type ApprovalAnswerPayload = z.output<typeof ApprovalAnswerPayloadSchema>;

// `accepted: false` = already settled, expired or answered elsewhere.
export const ApprovalAnswerResultSchema = z.object({
  accepted: z.boolean(),
});
export type ApprovalAnswerResult = z.output<typeof ApprovalAnswerResultSchema>;

// Per socket; a client that never sends it still gets requests.
export const ApprovalPreferencePayloadSchema = z.object({
  enabled: z.boolean(),
});
export type ApprovalPreferencePayload = z.output<typeof ApprovalPreferencePayloadSchema>;
