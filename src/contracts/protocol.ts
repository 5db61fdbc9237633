import { z } from 'zod';
import {
  ChatAddBookmarkPayloadSchema,
  ChatAnswerPayloadSchema,
  ChatApprovePayloadSchema,
  ChatAttachPayloadSchema,
  ChatAttachResultSchema,
  ChatBookmarksEventSchema,
  ChatBookmarksResultSchema,
  ChatCancelPayloadSchema,
  ChatClearPayloadSchema,
  ChatConfigurePayloadSchema,
  ChatContinueOnPayloadSchema,
  ChatContinueOnResultSchema,
  ChatCreatePayloadSchema,
  ChatDismissPayloadSchema,
  ChatEventEnvelopeSchema,
  ChatForkInfoPayloadSchema,
  ChatForkInfoResultSchema,
  ChatForkPayloadSchema,
  ChatForkResultSchema,
  ChatHistoryPayloadSchema,
  ChatHistoryResultSchema,
  ChatInfoSchema,
  ChatListResultSchema,
  ChatPreferencesPayloadSchema,
  ChatQueuePayloadSchema,
  ChatRemoveBookmarkPayloadSchema,
  ChatRemoveVisualPayloadSchema,
  ChatRenameBookmarkPayloadSchema,
  ChatSendPayloadSchema,
  ChatSendResultSchema,
  ChatStatusEventSchema,
  ChatStopSubagentPayloadSchema,
  ChatStopTaskPayloadSchema,
  ChatSubagentChangedEventSchema,
  ChatSubagentPayloadSchema,
  ChatSubagentResultSchema,
  ChatSummarizePayloadSchema,
  ChatSummarizeResultSchema,
  ChatTargetPayloadSchema,
  ChatTurnDiffPayloadSchema,
  ChatTurnDiffResultSchema,
  ChatUiChoicePayloadSchema,
  ChatUiQueryPayloadSchema,
  ChatUiQueryReadingSchema,
  ChatUnqueueResultSchema,
  ChatVisualsEventSchema,
  ChatVisualsResultSchema,
  SkillsListPayloadSchema,
  SkillsListResultSchema,
} from './chat.ts';
import {
  AgentResumePayloadSchema,
  ApprovalAnswerPayloadSchema,
  ApprovalAnswerResultSchema,
  ApprovalPreferencePayloadSchema,
  SessionApprovalsEventSchema,
} from './agent.ts';
import { ProviderListResultSchema } from './model.ts';
import {
  ProviderAccountCreatePayloadSchema,
  ProviderAccountCreateResultSchema,
  ProviderAccountsSavePayloadSchema,
  ProviderAccountsSchema,
  ProviderAccountWatchLoginPayloadSchema,
} from './provider-accounts.ts';
import { UsageChangedEventSchema, UsageLimitsSnapshotSchema, UsageSummaryPayloadSchema, UsageSummaryResultSchema } from './usage.ts';
import {
  HooksSetPayloadSchema,
  HooksStatusResultSchema,
  SessionHistoryPayloadSchema,
  SessionHistoryResultSchema,
  SessionItemsEventSchema,
  SessionListResultSchema,
  TerminalSessionSchema,
} from './terminal.ts';
import { FoldersListPayloadSchema, FoldersListResultSchema } from './folders.ts';

// A payload or result with nothing in it; extra keys are stripped, not refused.
export const EmptySchema = z.object({});
export type Empty = z.output<typeof EmptySchema>;

type RequestContract = { readonly payload: z.ZodType; readonly result: z.ZodType };

// Every request a host answers. The envelope parser accepts any name; this table
// is what decides `unknown-request` and which schema a payload must pass.
export const AGENT_REQUEST_SCHEMAS = {
  // Open and read
  'chat.create': { payload: ChatCreatePayloadSchema, result: ChatInfoSchema },
  'chat.list': { payload: EmptySchema, result: ChatListResultSchema },
  'chat.attach': { payload: ChatAttachPayloadSchema, result: ChatAttachResultSchema },
  'chat.detach': { payload: ChatTargetPayloadSchema, result: EmptySchema },
  'chat.history': { payload: ChatHistoryPayloadSchema, result: ChatHistoryResultSchema },
  // Send and control
  'chat.send': { payload: ChatSendPayloadSchema, result: ChatSendResultSchema },
  'chat.uiChoice': { payload: ChatUiChoicePayloadSchema, result: ChatSendResultSchema },
  'ui.query': { payload: ChatUiQueryPayloadSchema, result: ChatUiQueryReadingSchema },
  'chat.unqueue': { payload: ChatQueuePayloadSchema, result: ChatUnqueueResultSchema },
  'chat.sendNow': { payload: ChatQueuePayloadSchema, result: EmptySchema },
  'chat.cancel': { payload: ChatCancelPayloadSchema, result: EmptySchema },
  'chat.kill': { payload: ChatTargetPayloadSchema, result: EmptySchema },
  // Answer
  'chat.approve': { payload: ChatApprovePayloadSchema, result: EmptySchema },
  'chat.answer': { payload: ChatAnswerPayloadSchema, result: EmptySchema },
  'chat.dismiss': { payload: ChatDismissPayloadSchema, result: EmptySchema },
  // Configure
  'chat.configure': { payload: ChatConfigurePayloadSchema, result: ChatInfoSchema },
  'chat.setPreferences': { payload: ChatPreferencesPayloadSchema, result: EmptySchema },
  'chat.compact': { payload: ChatTargetPayloadSchema, result: EmptySchema },
  'chat.clear': { payload: ChatClearPayloadSchema, result: EmptySchema },
  // Turns and forks
  'chat.turnDiff': { payload: ChatTurnDiffPayloadSchema, result: ChatTurnDiffResultSchema },
  'chat.fork': { payload: ChatForkPayloadSchema, result: ChatForkResultSchema },
  'chat.continueOn': { payload: ChatContinueOnPayloadSchema, result: ChatContinueOnResultSchema },
  'chat.forkInfo': { payload: ChatForkInfoPayloadSchema, result: ChatForkInfoResultSchema },
  'chat.summarize': { payload: ChatSummarizePayloadSchema, result: ChatSummarizeResultSchema },
  // Delegated work
  'chat.subagent': { payload: ChatSubagentPayloadSchema, result: ChatSubagentResultSchema },
  'chat.stopSubagent': { payload: ChatStopSubagentPayloadSchema, result: EmptySchema },
  'chat.stopTask': { payload: ChatStopTaskPayloadSchema, result: EmptySchema },
  'skills.list': { payload: SkillsListPayloadSchema, result: SkillsListResultSchema },
  // Bookmarks and visuals
  'chat.addBookmark': { payload: ChatAddBookmarkPayloadSchema, result: ChatBookmarksResultSchema },
  'chat.renameBookmark': { payload: ChatRenameBookmarkPayloadSchema, result: ChatBookmarksResultSchema },
  'chat.removeBookmark': { payload: ChatRemoveBookmarkPayloadSchema, result: ChatBookmarksResultSchema },
  'chat.removeVisual': { payload: ChatRemoveVisualPayloadSchema, result: ChatVisualsResultSchema },
  // Providers and accounts
  'provider.list': { payload: EmptySchema, result: ProviderListResultSchema },
  'accounts.list': { payload: EmptySchema, result: ProviderAccountsSchema },
  'accounts.save': { payload: ProviderAccountsSavePayloadSchema, result: ProviderAccountsSchema },
  // Answers once every CLI was asked again.
  'accounts.refresh': { payload: EmptySchema, result: ProviderAccountsSchema },
  'accounts.create': { payload: ProviderAccountCreatePayloadSchema, result: ProviderAccountCreateResultSchema },
  // Answers at once; later news comes as `accounts.changed`.
  'accounts.watchLogin': { payload: ProviderAccountWatchLoginPayloadSchema, result: EmptySchema },
  // Usage
  'usage.summary': { payload: UsageSummaryPayloadSchema, result: UsageSummaryResultSchema },
  'usage.subscribe': { payload: EmptySchema, result: EmptySchema },
  'usage.unsubscribe': { payload: EmptySchema, result: EmptySchema },
  'usage.limits': { payload: EmptySchema, result: UsageLimitsSnapshotSchema },
  'usage.refreshLimits': { payload: EmptySchema, result: UsageLimitsSnapshotSchema },
  // Terminal sessions (terminal.ts): read from the CLI's hooks and transcript, answered from either side.
  'session.list': { payload: EmptySchema, result: SessionListResultSchema },
  'session.history': { payload: SessionHistoryPayloadSchema, result: SessionHistoryResultSchema },
  // `accepted: false` when the approval had already settled (in the terminal, by another client, expired).
  'session.approve': { payload: ApprovalAnswerPayloadSchema, result: ApprovalAnswerResultSchema },
  // Per socket, kept by the relay: whether this client wants the sessions' approvals at all.
  'session.approvalPreference': { payload: ApprovalPreferencePayloadSchema, result: EmptySchema },
  // Continues a session the terminal let go of as a chat on the same CLI session; answers the chat.
  'session.resume': { payload: AgentResumePayloadSchema, result: ChatInfoSchema },
  'hooks.status': { payload: EmptySchema, result: HooksStatusResultSchema },
  'hooks.set': { payload: HooksSetPayloadSchema, result: HooksStatusResultSchema },
  // Tether addition (folders.ts): folders a new chat may work in, read-only, inside the policy's roots.
  'folders.list': { payload: FoldersListPayloadSchema, result: FoldersListResultSchema },
} as const satisfies Record<string, RequestContract>;

export type AgentRequestType = keyof typeof AGENT_REQUEST_SCHEMAS;
export type RequestPayload<T extends AgentRequestType> = z.output<(typeof AGENT_REQUEST_SCHEMAS)[T]['payload']>;
export type RequestResult<T extends AgentRequestType> = z.output<(typeof AGENT_REQUEST_SCHEMAS)[T]['result']>;

// What a host pushes. Thread events go only to clients attached to the chat;
// the rest go to every client.
export const AGENT_EVENT_SCHEMAS = {
  'chat.event': ChatEventEnvelopeSchema,
  'chat.status': ChatStatusEventSchema,
  'chat.subagentChanged': ChatSubagentChangedEventSchema,
  'chat.bookmarks': ChatBookmarksEventSchema,
  'chat.visuals': ChatVisualsEventSchema,
  'usage.changed': UsageChangedEventSchema,
  'usage.limitsChanged': UsageLimitsSnapshotSchema,
  'accounts.changed': ProviderAccountsSchema,
  'session.status': TerminalSessionSchema,
  'session.approvals': SessionApprovalsEventSchema,
  'session.items': SessionItemsEventSchema,
} as const satisfies Record<string, z.ZodType>;

export type AgentEventName = keyof typeof AGENT_EVENT_SCHEMAS;
export type EventPayload<E extends AgentEventName> = z.output<(typeof AGENT_EVENT_SCHEMAS)[E]>;

// Own keys only, so `toString` or `__proto__` never pass for a request name.
export function isAgentRequestType(type: string): type is AgentRequestType {
  return Object.hasOwn(AGENT_REQUEST_SCHEMAS, type);
}

export function isAgentEventName(name: string): name is AgentEventName {
  return Object.hasOwn(AGENT_EVENT_SCHEMAS, name);
}
