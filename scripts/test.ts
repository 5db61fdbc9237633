// `npm test`: the type check, the lint, then each vitest project in turn (the end-to-end project last, alone,
// since it runs its own wrangler dev), then one closing line with the totals of all of them.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ensureAcpAgents } from './acp-agents.ts';
import { ensureChromium } from './chromium.ts';
import { typecheck } from './typecheck.ts';

const root = path.resolve(import.meta.dirname, '..');
// Each tool runs on this very Node (>= 22), whatever `node` the PATH would find first.
const tool = (script: string, args: string[]) =>
  spawnSync(process.execPath, [path.join(root, 'node_modules', script), ...args], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` },
  });
const projects = ['contracts', 'client', 'host', 'relay', 'deploy', 'e2e'];
const only = process.argv.slice(2);
const reports = mkdtempSync(path.join(tmpdir(), 'tether-test-'));
let passed = 0;
let failed = 0;
let skipped = 0;
let broken = false;
// Named again at the very end, since CI may keep only the tail of a long run's output.
const failures: string[] = [];

// The browser tests drive Debian's Chromium; install it when missing (needs root or sudo).
if (only.length === 0 || only.includes('e2e')) ensureChromium();
// The host's tests and e2e drive OpenCode and Qwen Code for real; see scripts/acp-agents.ts.
if (only.length === 0 || only.includes('host') || only.includes('e2e')) ensureAcpAgents();

const typeErrors = typecheck();
if (typeErrors.length > 0) {
  console.error(`The type check failed: ${typeErrors.join(', ')}`);
  process.exit(1);
}
// The lint and the format (biome.jsonc says which rules and why); only errors are shown here and fail
// the run (a lint error, a file not formatted), its warnings are `npm run lint`'s.
if (tool('@biomejs/biome/bin/biome', ['check', '--diagnostic-level=error', '--max-diagnostics=50']).status !== 0) {
  console.error('The lint or the format check failed (npm run lint shows every finding; npm run format rewrites unformatted files)');
  process.exit(1);
}

for (const project of only.length > 0 ? only : projects) {
  const report = path.join(reports, `${project}.json`);
  const run = tool('vitest/vitest.mjs', ['run', '--project', project, '--reporter=default', '--reporter=json', `--outputFile.json=${report}`]);
  try {
    const totals = JSON.parse(readFileSync(report, 'utf8')) as {
      numPassedTests: number;
      numFailedTests: number;
      numPendingTests: number;
      numTodoTests: number;
      testResults: Array<{
        name: string;
        status: string;
        message?: string;
        assertionResults: Array<{ status: string; fullName: string; failureMessages?: string[] }>;
      }>;
    };
    // A file that failed outside its tests (a beforeAll, an import) reports them skipped, not failed:
    // count those as failed, so the closing line never says "0 failed" of a run that failed.
    const brokenFiles = totals.testResults.filter((file) => file.status === 'failed' && !file.assertionResults.some((t) => t.status === 'failed'));
    const unrun = brokenFiles.reduce((sum, file) => sum + Math.max(1, file.assertionResults.filter((t) => t.status !== 'passed').length), 0);
    for (const file of totals.testResults) {
      const where = path.relative(root, file.name);
      for (const test of file.assertionResults.filter((t) => t.status === 'failed')) {
        failures.push(`${project}: ${where} > ${test.fullName}\n    ${(test.failureMessages?.[0] ?? '').split('\n').slice(0, 3).join('\n    ')}`);
      }
      if (brokenFiles.includes(file)) failures.push(`${project}: ${where} did not run: ${(file.message ?? '').split('\n').slice(0, 3).join(' ')}`);
    }
    passed += totals.numPassedTests;
    failed += totals.numFailedTests + unrun;
    skipped += Math.max(
      0,
      totals.numPendingTests +
        totals.numTodoTests -
        brokenFiles.reduce((sum, file) => sum + file.assertionResults.filter((t) => t.status !== 'passed').length, 0),
    );
  } catch {
    broken = true; // no report: the project could not run at all
  }
  if (run.status !== 0) broken = true;
}
rmSync(reports, { recursive: true, force: true });
if (failures.length > 0) console.log(`\nFailed:\n${failures.map((line) => `  ${line}`).join('\n')}`);
console.log(`\n${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(broken || failed > 0 ? 1 : 0);
