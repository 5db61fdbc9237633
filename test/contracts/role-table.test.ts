import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REQUEST_RULES, REQUEST_TYPES } from '../../src/contracts/requests.ts';
import { roleTable, ROLE_TABLE_BEGIN, ROLE_TABLE_END, withRoleTable } from '../../src/contracts/role-table.ts';

const readme = readFileSync(new URL('../../docs/protocol.md', import.meta.url), 'utf8');

describe('the role table in docs/protocol.md', () => {
  it('is the request registry as it is now (run `node scripts/role-table.ts --write` after changing a rule)', () => {
    expect(withRoleTable(readme)).toBe(readme);
  });

  it('names every request a client may send, once, in the row of its least role and the column of its scope', () => {
    const table = roleTable();
    for (const type of REQUEST_TYPES) {
      const rule = REQUEST_RULES[type];
      const found = table.split('\n').filter((line) => line.includes(`\`${type}\``));
      if (rule.from === 'route') {
        expect(found, type).toEqual([]);
        continue;
      }
      expect(found, type).toHaveLength(1);
      const [, role, chat, host] = found[0]!.split('|').map((cell) => cell.trim());
      expect(role, type).toBe(rule.role);
      expect((rule.scope === 'chat' ? chat : host)!.includes(`\`${type}\``), type).toBe(true);
    }
  });

  it('refuses a text whose markers are missing or repeated', () => {
    expect(() => withRoleTable('no table here')).toThrow(/markers/);
    expect(() => withRoleTable(`${ROLE_TABLE_BEGIN}\n${ROLE_TABLE_BEGIN}\n${ROLE_TABLE_END}`)).toThrow(/markers/);
    expect(() => withRoleTable(`${ROLE_TABLE_END}\n${ROLE_TABLE_BEGIN}`)).toThrow(/markers/);
  });
});
