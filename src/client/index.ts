// The client SDK: what the web app (and any other program) uses to reach hosts through a relay.
export { RelayApi, oidcBinding } from './api.ts';
export type { InvitationView, Me, RelayApiOptions, SessionSummary, SignInMethods, VisualTicket } from './api.ts';
export { LocalStorageTokenStore, MemoryTokenStore } from './tokens.ts';
export type { SessionTokens, TokenStore } from './tokens.ts';
export { Backoff } from '../contracts/backoff.ts';
export type { BackoffOptions } from '../contracts/backoff.ts';
export { LiveSocket } from './live-socket.ts';
export type { EventFrame, LinkState, LiveSocketOptions } from './live-socket.ts';
export { HostConnection } from './host-connection.ts';
export { TerminalSessionsView } from './terminal-sessions.ts';
export { ChatChannel } from './chat-channel.ts';
export type { ChatChannelOptions, ChatMessage } from './chat-channel.ts';
export { ThreadModel } from './thread.ts';
export type { EventOutcome, HistorySource, RequestItem, ThreadChange } from './thread.ts';
export { IdbOutboxStore, MemoryOutboxStore, PendingSend, defaultOutboxStore } from './outbox.ts';
export type { DeliveryState, OutboxEntry, OutboxScope, OutboxStore } from './outbox.ts';
export { RelaySocket, SocketClosedError, relayPaths } from './socket.ts';
export type { RelaySocketOptions } from './socket.ts';
export { pushKey, subscribeToPush, unsubscribeFromPush } from './push.ts';
export type { PushApi, PushManagerLike } from './push.ts';
export { transcriptJson, transcriptMarkdown } from './transcript.ts';
export { chatTitle, providerName } from './chat-title.ts';
export { modelName } from './model-name.ts';
export type { TranscriptSource } from './transcript.ts';
export {
  addDeviceByCrossSigning,
  newGrantId,
  resignTeamGrant,
  revokeDeviceSigned,
  revokeGrantSigned,
  shareSigned,
  signGrant,
  signRevocation,
} from './trust.ts';
export type { ShareRequest, SignedGrantSubject } from './trust.ts';
