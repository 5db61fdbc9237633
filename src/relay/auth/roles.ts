// The least role each request needs, in one table: a person may send a request when their role on the
// host (or on that chat) is at least this. Checked on every frame, not once at connect.
import { ACCESS_ROLES, type AgentRequestType } from '../../contracts/index.ts';

/** Lowest first: each role may do everything the ones before it may. */
export const ROLES = ACCESS_ROLES;
export type Role = (typeof ROLES)[number];

export const MINIMAL_ROLE: Record<AgentRequestType, Role> = {
  'chat.list': 'viewer',
  'chat.attach': 'viewer',
  'chat.detach': 'viewer',
  'chat.history': 'viewer',
  'chat.subagent': 'viewer',
  'chat.turnDiff': 'viewer',
  'chat.forkInfo': 'viewer',
  'skills.list': 'viewer',
  'provider.list': 'viewer',
  'usage.summary': 'viewer',
  'usage.subscribe': 'viewer',
  'usage.unsubscribe': 'viewer',
  'usage.limits': 'viewer',
  'ui.query': 'viewer',
  'chat.create': 'operator',
  'chat.send': 'operator',
  'chat.uiChoice': 'operator',
  'chat.unqueue': 'operator',
  'chat.sendNow': 'operator',
  'chat.cancel': 'operator',
  'chat.approve': 'operator',
  'chat.answer': 'operator',
  'chat.dismiss': 'operator',
  'chat.configure': 'operator',
  'chat.setPreferences': 'operator',
  'chat.compact': 'operator',
  'chat.fork': 'operator',
  'chat.summarize': 'operator',
  'chat.stopSubagent': 'operator',
  'chat.stopTask': 'operator',
  'chat.addBookmark': 'operator',
  'chat.renameBookmark': 'operator',
  'chat.removeBookmark': 'operator',
  'chat.removeVisual': 'operator',
  'usage.refreshLimits': 'operator',
  'chat.continueOn': 'owner',
  'chat.clear': 'owner',
  'chat.kill': 'owner',
  'accounts.list': 'owner',
  'accounts.refresh': 'owner',
  'accounts.save': 'owner',
  'accounts.create': 'owner',
  'accounts.watchLogin': 'owner',
};

/**
 * Requests that make new chats from one (a fork, a continuation under another account): like
 * `chat.create`, they need their role on the whole host, whichever chat they name. A grant on one chat
 * is for that chat, not for starting others (with their own worktree, provider or account).
 */
export const MAKES_CHATS: ReadonlySet<AgentRequestType> = new Set(['chat.fork', 'chat.continueOn']);

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
};

/** The least role that hears a pushed host-wide event; one this table does not know only an owner hears. */
export function roleToHear(event: string): Role {
  const request = READ_BY[event];
  return request ? MINIMAL_ROLE[request] : 'owner';
}
