// The role table people read (docs/protocol.md, "Identity, roles and grants"), made from the request registry:
// each client request under the least role that may make it, on one chat (its ChatRoom) or on the
// whole host (the Lobby). Requests only the relay's own routes make are not a person's to send.
import { ACCESS_ROLES } from './teams.ts';
import { REQUEST_RULES, REQUEST_TYPES, requirementOf } from './requests.ts';

export const ROLE_TABLE_BEGIN = '<!-- role-table: made by `node scripts/role-table.ts --write` from src/contracts/requests.ts -->';
export const ROLE_TABLE_END = '<!-- /role-table -->';

const HOST_WIDE_MARK = '†';

export function roleTable(): string {
  const rows = ACCESS_ROLES.map((role) => {
    const mine = REQUEST_TYPES.filter((type) => REQUEST_RULES[type].from === 'socket' && REQUEST_RULES[type].role === role);
    const cell = (scope: 'chat' | 'host') => {
      const types = mine.filter((type) => REQUEST_RULES[type].scope === scope);
      // A chat request that makes chats is checked against the role on the whole host, whichever chat it names.
      return types.length === 0 ? '—' : types.map((type) => `\`${type}\`${scope === 'chat' && requirementOf(type).hostWide ? HOST_WIDE_MARK : ''}`).join(', ');
    };
    return `| ${role} | ${cell('chat')} | ${cell('host')} |`;
  });
  return [
    '| Role | About one chat (its ChatRoom) | About the whole host (the Lobby) |',
    '| --- | --- | --- |',
    ...rows,
    '',
    `${HOST_WIDE_MARK} makes chats, so the role is needed on the whole host, whichever chat it names.`,
  ].join('\n');
}

/** `text` with the table between its markers made anew; the markers must be there, once each. */
export function withRoleTable(text: string): string {
  const begin = text.indexOf(ROLE_TABLE_BEGIN);
  const end = text.indexOf(ROLE_TABLE_END);
  if (begin < 0 || end < begin || text.indexOf(ROLE_TABLE_BEGIN, begin + 1) >= 0) {
    throw new Error(`the role table's markers are missing or repeated: ${ROLE_TABLE_BEGIN} … ${ROLE_TABLE_END}`);
  }
  return `${text.slice(0, begin + ROLE_TABLE_BEGIN.length)}\n${roleTable()}\n${text.slice(end)}`;
}
