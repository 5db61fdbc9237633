// Prints the role table of docs/protocol.md from the request registry, so the table is never kept by hand:
// `node scripts/role-table.ts --write` puts it between the markers in docs/protocol.md, and the contracts test
// (test/contracts/role-table.test.ts) fails when that copy differs from the registry.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { roleTable, ROLE_TABLE_BEGIN, ROLE_TABLE_END, withRoleTable } from '../src/contracts/role-table.ts';

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const readme = fileURLToPath(new URL('../docs/protocol.md', import.meta.url));
  if (process.argv.includes('--write')) {
    writeFileSync(readme, withRoleTable(readFileSync(readme, 'utf8')));
    console.log(`docs/protocol.md: the role table between ${ROLE_TABLE_BEGIN} and ${ROLE_TABLE_END} is the registry's`);
  } else {
    console.log(roleTable());
  }
}
