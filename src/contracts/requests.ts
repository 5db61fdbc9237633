// The request registry: for every request type Tether knows, what it is and who may make it, stated
// once. The relay's checks (which socket serves it, the least role, the reply journal, the audit log,
// approvals) and the host's journal all read their tables from here, so a new request is one entry:
// the compiler refuses a request type missing from it.
//
// Besides the agent-contracts table (AGENT_REQUEST_SCHEMAS) it holds two requests no client sends on
// a socket: `attachment.read`, which the relay's attachment route sends the host over the link, and
// `visual.page`, the relay's own route that serves a visual's stored page.
import { LINK_ATTACHMENT_READ } from './link.ts';
import type { AgentRequestType } from './protocol.ts';
import { ACCESS_ROLES } from './teams.ts';

/** A person's role on a host or a chat, lowest first. */
export type AccessRole = (typeof ACCESS_ROLES)[number];

/** The relay's route that serves a stored visual page (the page arrives from the host as a `visual.page` event). */
export const ROUTE_VISUAL_PAGE = 'visual.page';

/** Requests made only by the relay's own HTTP routes, never sent by a client on a socket. */
export type RouteRequestType = typeof LINK_ATTACHMENT_READ | typeof ROUTE_VISUAL_PAGE;
export type RequestType = AgentRequestType | RouteRequestType;

export interface RequestRule {
  /**
   * `host`: about the whole host, served on the host's Lobby socket, checked against the role on the
   * whole host. `chat`: about the one chat its payload names, served by that chat's ChatRoom (on the
   * chat's socket, or passed on by the Lobby), checked against the role on that chat.
   */
  readonly scope: 'host' | 'chat';
  /** Who answers it: the host, or the relay itself from what it keeps (bookmarks, visual records, the thread). */
  readonly servedBy: 'host' | 'relay';
  /** `socket`: a client frame. `route`: only the relay's own HTTP route makes it. */
  readonly from: 'socket' | 'route';
  /** About the socket it arrives on (attaching, detaching, paging what it attached): served only on the chat's own socket. */
  readonly socketBound: boolean;
  /** The least role that may make it. */
  readonly role: AccessRole;
  /** It makes new chats (with their own folder, provider or account): the role is needed on the whole host, whichever chat it names. */
  readonly makesChats: boolean;
  /**
   * When its payload moves a chat onto another account (or provider), it needs what `chat.continueOn`
   * needs: an account is the machine owner's credentials and configuration, not the chat's.
   */
  readonly switchesAccount: boolean;
  /**
   * It makes the machine do something (run or stop a CLI, change what will run, change a chat or the
   * host's configuration), rather than read. A request that acts on the machine is audited, and will
   * be signed by the person's device (issue 15).
   */
  readonly actsOnMachine: boolean;
  /** A retried request id is answered once, with the first reply, and never runs twice (relay and host journals). */
  readonly answeredOnce: boolean;
  /**
   * Every effect it has is an event of the chat it names (chat.send: its message, its place in the
   * queue). The host's journal then marks it as started in the same commit as its first event, so one
   * killed before it changed the chat runs when retried (the relay resends a kept send after a host
   * restart) instead of being answered as interrupted (src/host/chats/journal.ts).
   */
  readonly changesOnlyItsChat: boolean;
  /** Recorded in the host's audit log: who, which host and chat, when (never its text). */
  readonly audited: boolean;
  /**
   * It settles a waiting approval or question: the first answer wins (for a chat's, the relay's
   * request ledger too), and a signed one names what it settles as it was shown (settledRequestDigest).
   */
  readonly settles: boolean;
}

type RuleInput = Pick<RequestRule, 'scope' | 'role' | 'servedBy'> & Partial<Omit<RequestRule, 'scope' | 'role' | 'servedBy'>>;

const READS = { servedBy: 'host' } as const;
const ACTS = { servedBy: 'host', actsOnMachine: true, audited: true } as const;
const CHANGES = { ...ACTS, answeredOnce: true } as const;
/** Answered by the relay from what it keeps; changes nothing on the machine. */
const RELAY_KEEPS = { servedBy: 'relay', answeredOnce: true } as const;

const RULES = {
  // Open and read
  'chat.create': { scope: 'host', role: 'operator', ...CHANGES, makesChats: true },
  'chat.list': { scope: 'host', role: 'viewer', ...READS },
  'chat.attach': { scope: 'chat', role: 'viewer', servedBy: 'relay', socketBound: true },
  'chat.detach': { scope: 'chat', role: 'viewer', servedBy: 'relay', socketBound: true },
  'chat.history': { scope: 'chat', role: 'viewer', servedBy: 'relay', socketBound: true },
  // Send and control
  'chat.send': { scope: 'chat', role: 'operator', ...CHANGES, changesOnlyItsChat: true },
  'chat.uiChoice': { scope: 'chat', role: 'operator', ...CHANGES },
  'ui.query': { scope: 'chat', role: 'viewer', ...READS },
  'chat.unqueue': { scope: 'chat', role: 'operator', ...CHANGES },
  'chat.sendNow': { scope: 'chat', role: 'operator', ...CHANGES },
  'chat.cancel': { scope: 'chat', role: 'operator', ...CHANGES },
  'chat.kill': { scope: 'chat', role: 'owner', ...CHANGES },
  // Answer
  'chat.approve': { scope: 'chat', role: 'operator', ...CHANGES, settles: true },
  'chat.answer': { scope: 'chat', role: 'operator', ...CHANGES, settles: true },
  'chat.dismiss': { scope: 'chat', role: 'operator', ...CHANGES, settles: true },
  // Configure
  'chat.configure': { scope: 'chat', role: 'operator', ...CHANGES, switchesAccount: true },
  // Per connection: the relay is one connection of the host, so these are the host's for everyone.
  'chat.setPreferences': { scope: 'host', role: 'operator', ...ACTS },
  'chat.compact': { scope: 'chat', role: 'operator', ...CHANGES },
  'chat.clear': { scope: 'chat', role: 'owner', ...CHANGES },
  // Turns and forks
  'chat.turnDiff': { scope: 'chat', role: 'viewer', ...READS },
  'chat.fork': { scope: 'chat', role: 'operator', ...CHANGES, makesChats: true, switchesAccount: true },
  'chat.continueOn': { scope: 'chat', role: 'owner', ...CHANGES, makesChats: true },
  'chat.forkInfo': { scope: 'chat', role: 'viewer', ...READS },
  'chat.summarize': { scope: 'chat', role: 'operator', ...CHANGES },
  // Delegated work
  'chat.subagent': { scope: 'chat', role: 'viewer', ...READS },
  'chat.stopSubagent': { scope: 'chat', role: 'operator', ...CHANGES },
  'chat.stopTask': { scope: 'chat', role: 'operator', ...CHANGES },
  'skills.list': { scope: 'chat', role: 'viewer', ...READS },
  // Bookmarks and visuals: the relay's own records
  'chat.addBookmark': { scope: 'chat', role: 'operator', ...RELAY_KEEPS },
  'chat.renameBookmark': { scope: 'chat', role: 'operator', ...RELAY_KEEPS },
  'chat.removeBookmark': { scope: 'chat', role: 'operator', ...RELAY_KEEPS },
  'chat.removeVisual': { scope: 'chat', role: 'operator', ...RELAY_KEEPS },
  // Providers and accounts: the machine owner's credentials and configuration
  // Operator: besides the catalog, it carries the machine's paths (each agent's executable, the host's
  // config file and data folder, the allowed roots), which a viewer, who only reads chats, never gets.
  'provider.list': { scope: 'host', role: 'operator', ...READS },
  // A read, but of the owner's accounts: audited as the other account requests are.
  'accounts.list': { scope: 'host', role: 'owner', ...READS, audited: true },
  'accounts.save': { scope: 'host', role: 'owner', ...CHANGES },
  // Asks every CLI again (each runs on the machine).
  'accounts.refresh': { scope: 'host', role: 'owner', ...ACTS },
  'accounts.create': { scope: 'host', role: 'owner', ...CHANGES },
  // Starts a CLI's sign-in on the machine.
  'accounts.watchLogin': { scope: 'host', role: 'owner', ...ACTS },
  // Usage. The summary names every project folder on the machine the CLIs worked in (and where their
  // session files are), chats of this host or not: operator, as is following it (its `usage.changed`
  // is heard by the summary's role). The plan limits carry no paths.
  'usage.summary': { scope: 'host', role: 'operator', ...READS },
  'usage.subscribe': { scope: 'host', role: 'operator', ...READS },
  'usage.unsubscribe': { scope: 'host', role: 'operator', ...READS },
  'usage.limits': { scope: 'host', role: 'viewer', ...READS },
  'usage.refreshLimits': { scope: 'host', role: 'operator', ...READS },
  // Terminal sessions: the person's own terminal, so the host-wide role decides, like chat.list.
  'session.list': { scope: 'host', role: 'viewer', ...READS },
  'session.history': { scope: 'host', role: 'viewer', ...READS },
  // Lets a CLI in a terminal run a tool. The first answer wins on the host (the terminal's or a
  // client's; the relay's request ledger is a chat's); a signed one must name the approval it settles.
  'session.approve': { scope: 'host', role: 'operator', ...CHANGES, settles: true },
  'session.approvalPreference': { scope: 'host', role: 'viewer', servedBy: 'relay' },
  // Runs the CLI on the session as a chat: makes a chat, like chat.create.
  'session.resume': { scope: 'host', role: 'operator', ...CHANGES, makesChats: true },
  'hooks.status': { scope: 'host', role: 'owner', ...READS },
  // Writes the CLI's configuration on the machine.
  'hooks.set': { scope: 'host', role: 'owner', ...CHANGES },
  // Reads folder names inside the policy's roots, for whoever may start chats there (a chat's folder).
  'folders.list': { scope: 'host', role: 'operator', ...READS },
  // The relay's routes
  [LINK_ATTACHMENT_READ]: { scope: 'chat', role: 'viewer', ...READS, from: 'route' },
  [ROUTE_VISUAL_PAGE]: { scope: 'chat', role: 'viewer', servedBy: 'relay', from: 'route' },
} as const satisfies Record<RequestType, RuleInput>;

const DEFAULTS: Omit<RequestRule, 'scope' | 'role' | 'servedBy'> = {
  from: 'socket',
  socketBound: false,
  makesChats: false,
  switchesAccount: false,
  actsOnMachine: false,
  answeredOnce: false,
  changesOnlyItsChat: false,
  audited: false,
  settles: false,
};

/** Every request type with its whole rule. */
export const REQUEST_RULES: { readonly [T in RequestType]: RequestRule & { readonly scope: (typeof RULES)[T]['scope'] } } = Object.fromEntries(
  Object.entries(RULES).map(([type, input]) => [type, Object.freeze({ ...DEFAULTS, ...input })]),
) as never;

export const REQUEST_TYPES = Object.keys(RULES) as RequestType[];

/** Requests a client may send on a socket (the agent-contracts table). */
export type ClientRequestType = { [T in RequestType]: (typeof RULES)[T] extends { from: 'route' } ? never : T }[RequestType];
/** Client requests about one chat, served by its ChatRoom. */
export type ChatRequestType = { [T in ClientRequestType]: (typeof RULES)[T]['scope'] extends 'chat' ? T : never }[ClientRequestType];
/** Client requests about the whole host, served by the Lobby. */
export type HostRequestType = Exclude<ClientRequestType, ChatRequestType>;

// Own keys only, so `toString` or `__proto__` never pass for a request name.
export function isRequestType(type: string): type is RequestType {
  return Object.hasOwn(RULES, type);
}

/** The request types whose rule passes a test: each hand-kept table of old is one of these. */
export function requestsWhere(test: (rule: RequestRule, type: RequestType) => boolean): ReadonlySet<RequestType> {
  return new Set(REQUEST_TYPES.filter((type) => test(REQUEST_RULES[type], type)));
}

export function isChatRequest(type: RequestType): type is ChatRequestType {
  return REQUEST_RULES[type].scope === 'chat' && REQUEST_RULES[type].from === 'socket';
}

export function isHostRequest(type: RequestType): type is HostRequestType {
  return REQUEST_RULES[type].scope === 'host' && REQUEST_RULES[type].from === 'socket';
}

/** What a request needs of its sender: a role, on its chat or on the whole host. */
export interface Requirement {
  role: AccessRole;
  /** The role must be held on the whole host (a host request, one that makes chats, an account switch). */
  hostWide: boolean;
}

/** The request that moves a chat to another account: a switch by any other request needs what it needs. */
const ACCOUNT_SWITCH: RequestType = 'chat.continueOn';

/**
 * What a request needs. `switchesAccount`: whether this one moves its chat onto another account or
 * provider (decided from its payload and the chat's info by whoever checks); only a request whose
 * rule says it may do that is raised by it.
 */
export function requirementOf(type: RequestType, switchesAccount = false): Requirement {
  const rule = REQUEST_RULES[type];
  const own: Requirement = { role: rule.role, hostWide: rule.scope === 'host' || rule.makesChats };
  if (!(switchesAccount && rule.switchesAccount)) return own;
  const other = requirementOf(ACCOUNT_SWITCH);
  return { role: higherRole(own.role, other.role), hostWide: own.hostWide || other.hostWide };
}

/** The greater of two roles (each role may do everything the ones before it in ACCESS_ROLES may). */
export function higherRole(a: AccessRole, b: AccessRole): AccessRole {
  return ACCESS_ROLES.indexOf(a) >= ACCESS_ROLES.indexOf(b) ? a : b;
}

/**
 * Whether a payload moves its chat off the account (or provider) it is on. `current` is the chat's
 * info as the checker knows it; when it does not know the chat, any named account counts as a switch.
 */
export function switchesAccount(payload: { account?: string; provider?: string }, current: { account?: string; provider: string } | null): boolean {
  if (payload.provider !== undefined && payload.provider !== current?.provider) return true;
  if (payload.account === undefined) return false;
  if (!current) return true;
  // No account, or one named after its kind, is the default account (provider-accounts).
  const of = (account: string | undefined) => (account === undefined || account === current.provider ? '' : account);
  return of(payload.account) !== of(current.account);
}
