// Roles on the relay: a person may send a request when their role on the host (or on that chat) is at
// least the one the request registry names for it (src/contracts/requests.ts). Checked on every frame,
// not once at connect.
import { ACCESS_ROLES, REQUEST_RULES, REQUEST_TYPES, requestsWhere, type AgentRequestType, type RequestType } from '../../contracts/index.ts';

/** Lowest first: each role may do everything the ones before it may. */
export const ROLES = ACCESS_ROLES;
export type Role = (typeof ROLES)[number];

/** The least role of each request, from the registry (src/contracts/requests.ts). */
export const MINIMAL_ROLE: { readonly [T in RequestType]: Role } = Object.fromEntries(REQUEST_TYPES.map((type) => [type, REQUEST_RULES[type].role])) as never;

/**
 * Requests that make new chats from one (a fork, a continuation under another account): like
 * `chat.create`, they need their role on the whole host, whichever chat they name. A grant on one chat
 * is for that chat, not for starting others (with their own worktree, provider or account).
 */
export const MAKES_CHATS: ReadonlySet<RequestType> = requestsWhere((rule) => rule.makesChats);

export function roleAllows(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/** Who may ask for something may hear of its changes: each host-wide event under the request that reads it. */
const READ_BY: Record<string, AgentRequestType> = {
  'host.presence': 'chat.list',
  'chat.status': 'chat.list',
  'accounts.changed': 'accounts.list',
  'usage.changed': 'usage.summary',
  'usage.limitsChanged': 'usage.limits',
  'session.status': 'session.list',
  'session.approvals': 'session.list',
  'session.items': 'session.history',
};

/** The least role that hears a pushed host-wide event; one this table does not know only an owner hears. */
export function roleToHear(event: string): Role {
  const request = READ_BY[event];
  return request ? REQUEST_RULES[request].role : 'owner';
}
