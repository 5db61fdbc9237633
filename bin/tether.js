#!/usr/bin/env node
// The `tether` command. The host is TypeScript run by Node's type stripping (Node >= 22.18 / 24).
import { main } from '../src/host/cli.ts';

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
