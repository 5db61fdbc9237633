// The relay's access API: teams with members and single-use invitations, grants of a role on a host
// or one of its chats to a user or a team, and a host's audit log. Clients and the relay both speak
// these shapes over HTTP; neither re-declares them.
import { z } from 'zod';
import { ChatInfoSchema } from './chat.ts';

export const ACCESS_ROLES = ['viewer', 'operator', 'owner'] as const;
export const AccessRoleSchema = z.enum(ACCESS_ROLES);

/** A team member's role: owners and admins invite and remove members; only owners make owners. */
export const TEAM_ROLES = ['owner', 'admin', 'member'] as const;
export const TeamRoleSchema = z.enum(TEAM_ROLES);

export const TeamNameSchema = z.string().trim().min(1).max(100);

export const TeamCreateRequestSchema = z.object({ name: TeamNameSchema });

export const TeamSummarySchema = z.object({
  id: z.string().min(1),
  name: z.string(),
  /** The asker's role in the team. */
  role: TeamRoleSchema,
  createdAt: z.number(),
});
export type TeamSummary = z.output<typeof TeamSummarySchema>;
/** `GET /api/teams`: the teams the asker is in. */
export const TeamListSchema = z.object({ teams: z.array(TeamSummarySchema) });

export const TeamMemberSchema = z.object({
  userId: z.string().min(1),
  name: z.string(),
  email: z.string().nullable(),
  role: TeamRoleSchema,
  joinedAt: z.number(),
});

export const TeamDetailSchema = TeamSummarySchema.extend({ members: z.array(TeamMemberSchema) });
export type TeamDetail = z.output<typeof TeamDetailSchema>;

export const TeamMemberRoleRequestSchema = z.object({ role: TeamRoleSchema });

/** An invitation into a team; `email`, when given, is the only address that may accept it. */
export const InvitationCreateRequestSchema = z.object({
  role: TeamRoleSchema.default('member'),
  email: z.email().max(320).optional(),
});

export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export const InvitationSchema = z.object({
  id: z.string().min(1),
  /** Secret, shown once: whoever holds it may accept (once, before `expiresAt`). */
  token: z.string().min(1),
  /** Where it is accepted: `POST` here. */
  acceptUrl: z.string().min(1),
  teamId: z.string().min(1),
  role: TeamRoleSchema,
  email: z.string().nullable(),
  expiresAt: z.number(),
});
export type Invitation = z.output<typeof InvitationSchema>;

/** Accepting while signed out creates the account; signed in, the body may be empty. */
export const InvitationAcceptRequestSchema = z.object({
  email: z.email().max(320),
  password: z.string().min(1).max(1024),
  name: z.string().trim().min(1).max(100),
});

export const GrantSubjectSchema = z.discriminatedUnion('type', [
  z
    .object({ type: z.literal('user'), id: z.string().min(1).max(200).optional(), email: z.email().max(320).optional() })
    .refine((s) => (s.id === undefined) !== (s.email === undefined), 'a user subject needs exactly one of id and email'),
  z.object({ type: z.literal('team'), id: z.string().min(1).max(200) }),
]);

export const GrantCreateRequestSchema = z.object({
  subject: GrantSubjectSchema,
  role: AccessRoleSchema,
  /** One chat of the host; the whole host when absent. */
  chatId: z.string().min(1).max(200).optional(),
});
export type GrantCreateRequest = z.input<typeof GrantCreateRequestSchema>;

/** A person named in a team grant's drift: their id and what the relay shows for them (email, else name; null for an account gone). */
export const GrantPersonSchema = z.object({ userId: z.string().min(1), name: z.string().nullable() });
export type GrantPerson = z.output<typeof GrantPersonSchema>;

/**
 * `GET /api/hosts/:id/grants/teams/:teamId/members`: the members an owner of the host signs a team's
 * grant over (ids, and names to show), for a team that holds a grant on that host or that the owner
 * belongs to. No emails or team roles: an owner outside the team learns only whom the grant serves.
 */
export const TeamMembersToSignSchema = z.object({
  teamId: z.string().min(1),
  members: z.array(z.object({ userId: z.string().min(1), name: z.string() })),
});
export type TeamMembersToSign = z.output<typeof TeamMembersToSignSchema>;

/**
 * `GET /api/teams/:id/grants-to-sign`: for a member of the team, the hosts they own (the whole host)
 * where the team's signed grant names members it no longer has, so they sign it again there; empty
 * for a member who owns none of them.
 */
export const TeamGrantsToSignSchema = z.object({
  hosts: z.array(z.object({ hostId: z.string().min(1), hostName: z.string(), grants: z.number().int().positive() })),
});
export type TeamGrantsToSign = z.output<typeof TeamGrantsToSignSchema>;

/**
 * A signed team grant whose member list is no longer the team's: who joined since it was signed (the
 * host does not follow them yet) and who left (the host still follows them, by the owner's old
 * signature). It holds until an owner of the host signs the grant again with the members as they
 * are now, which replaces the old statement on the host.
 */
export const GrantResignSchema = z.object({ joined: z.array(GrantPersonSchema), left: z.array(GrantPersonSchema) });
export type GrantResign = z.output<typeof GrantResignSchema>;

/** The drift between the members a team grant's statement names and the team's members now; null when they agree. */
export function resignOf(signed: readonly string[], now: readonly GrantPerson[], nameOf: (userId: string) => string | null): GrantResign | null {
  const named = new Set(signed);
  const current = new Set(now.map((p) => p.userId));
  const joined = now.filter((p) => !named.has(p.userId));
  const left = [...named].filter((id) => !current.has(id)).map((userId) => ({ userId, name: nameOf(userId) }));
  return joined.length === 0 && left.length === 0 ? null : { joined, left };
}

export const GrantSchema = z.object({
  id: z.string().min(1),
  hostId: z.string().min(1),
  /** Null for the whole host. */
  chatId: z.string().nullable(),
  subject: z.object({ type: z.enum(['user', 'team']), id: z.string().min(1), name: z.string().nullable() }),
  role: AccessRoleSchema,
  createdBy: z.string(),
  createdAt: z.number(),
  /** Whether an owner's device signed it (the statement the host follows); an unsigned grant rules the relay's checks alone. */
  signed: z.boolean(),
  /** For a signed team grant whose members changed since it was signed: who joined and who left (null when in sync, or not a signed team grant). */
  resign: GrantResignSchema.nullable(),
});
export type Grant = z.output<typeof GrantSchema>;
/** `GET /api/hosts/:id/grants` and `/grants/mine`. */
export const GrantListSchema = z.object({ grants: z.array(GrantSchema) });

export const AuditQuerySchema = z.object({
  before: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(100).optional(),
});

export const AuditEntrySchema = z.object({
  id: z.number().int(),
  at: z.number(),
  actor: z.string().nullable(),
  sessionId: z.string().nullable(),
  ip: z.string().nullable(),
  action: z.string(),
  hostId: z.string().nullable(),
  chatId: z.string().nullable(),
  detail: z.record(z.string(), z.unknown()).nullable(),
});
export const AuditPageSchema = z.object({ entries: z.array(AuditEntrySchema), next: z.number().nullable() });
export type AuditPage = z.output<typeof AuditPageSchema>;

/** One chat of the chat index (`GET /api/chats`): every chat the asker may see, across hosts. */
export const IndexedChatSchema = z.object({
  hostId: z.string().min(1),
  hostName: z.string(),
  /** The asker's role on this chat. */
  role: AccessRoleSchema,
  /** The last ChatInfo the host reported. */
  info: ChatInfoSchema,
  updatedAt: z.number(),
});
export type IndexedChat = z.output<typeof IndexedChatSchema>;
/** `GET /api/chats?limit=`: the chat index, newest first. */
export const IndexedChatListSchema = z.object({ chats: z.array(IndexedChatSchema) });
