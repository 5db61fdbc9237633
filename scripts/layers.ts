// The dependency rule of src (DEVELOPERS.md, Layers), checked: `node scripts/layers.ts`, and in `npm test`
// through test/contracts/layers.test.ts. It reads every import of every file with the TypeScript parser
// (no type check, so it takes a second) and answers what breaks the rule:
// - a target (a folder of src) imports only from the targets TARGET_RULES lets it, and only types where
//   it says types;
// - inside the relay, a layer imports values only from the layers below it (RELAY_LAYERS, lowest
//   first); from above, types only, and `db` not even those: it takes a D1Database, never the Worker's Env;
// - contracts imports nothing from outside its folder but the packages CONTRACTS_PACKAGES names;
// - no cycle of value imports between folders: the targets, and the relay's layers.
// A type-only import is `import type` or `export type`: `import { type A }` still loads its module at
// run time (verbatimModuleSyntax keeps it as `import {}`), so it counts as a value import.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const TARGETS = ['contracts', 'relay', 'host', 'client', 'web'] as const;
export type Target = (typeof TARGETS)[number];
/** What one target may import from another: its values (and types), its types only, or nothing. */
export type Access = 'values' | 'types';

/** Who may import whom across targets; a pair not listed may import nothing. */
export const TARGET_RULES: { readonly [T in Target]: { readonly [U in Target]?: Access } } = {
  // The vocabulary every side shares: it depends on no side.
  contracts: {},
  relay: { contracts: 'values' },
  host: { contracts: 'values' },
  // The SDK may read the relay's route types (hono's `hc<typeof app>`), never its code.
  client: { contracts: 'values', relay: 'types' },
  web: { contracts: 'values', client: 'values' },
};

/** The relay's layers, lowest first, and the files of each (paths under src/relay; a folder ends in `/`). */
export const RELAY_LAYERS: ReadonlyArray<{ layer: string; files: readonly string[]; noTypesFromAbove?: true }> = [
  { layer: 'log', files: ['log.ts', 'als.d.ts'] },
  // D1 statements; takes a D1Database. Knows nothing above it, not even the Worker's Env.
  { layer: 'db', files: ['db/'], noTypesFromAbove: true },
  // The Worker's bindings: a type, naming the objects' classes (type imports from above).
  { layer: 'env', files: ['env.ts'] },
  { layer: 'metrics', files: ['metrics/'] },
  { layer: 'auth', files: ['auth/'] },
  { layer: 'push', files: ['push/'] },
  { layer: 'objects', files: ['objects/'] },
  { layer: 'http', files: ['http/'] },
  // The Worker's entry: routes and exported objects.
  { layer: 'index', files: ['index.ts'] },
];

/** The packages contracts may import: it runs in the Worker, the host and the browser alike. */
export const CONTRACTS_PACKAGES: readonly string[] = ['zod'];

export interface Violation {
  /** The importing file, relative to the root. */
  file: string;
  /** What it imports, as written, or the folders of a cycle. */
  imports: string;
  rule: string;
}

/** A value import between two folders, by the file that makes it. */
interface Edge {
  from: string;
  to: string;
  spec: string;
  file: string;
}

const SOURCE = /\.(ts|tsx|mts|cts)$/;

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const where = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourcesUnder(where);
    return SOURCE.test(entry.name) ? [where] : [];
  });
}

/** Every import and re-export of a file, with whether it is erased (type-only). */
function importsOf(file: string): Array<{ spec: string; typeOnly: boolean }> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Array<{ spec: string; typeOnly: boolean }> = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ spec: node.moduleSpecifier.text, typeOnly: node.importClause?.isTypeOnly ?? false });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ spec: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      found.push({ spec: node.moduleReference.expression.text, typeOnly: node.isTypeOnly });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push({ spec: node.arguments[0].text, typeOnly: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ spec: node.argument.literal.text, typeOnly: true });
    } else if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name)) {
      return; // `declare module 'x'` declares x; it imports nothing
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The target of a path relative to src (its first folder), or null for a file outside every target. */
function targetOf(fromSrc: string): Target | null {
  const first = fromSrc.split('/')[0];
  return (TARGETS as readonly string[]).includes(first) ? (first as Target) : null;
}

/** The index in RELAY_LAYERS of a path relative to src/relay, or -1. */
function relayLayerOf(fromRelay: string): number {
  return RELAY_LAYERS.findIndex(({ files }) => files.some((f) => (f.endsWith('/') ? fromRelay.startsWith(f) : fromRelay === f)));
}

/**
 * The folder a file counts in for cycles: its relay layer, else its target. The subfolders of host and
 * web are features, not layers, and are not held to it (today their value imports form one cycle each).
 */
function folderOf(fromSrc: string): string {
  if (fromSrc.startsWith('relay/')) {
    const layer = relayLayerOf(fromSrc.slice('relay/'.length));
    if (layer >= 0) return `relay/${RELAY_LAYERS[layer].layer}`;
  }
  return fromSrc.split('/')[0];
}

/** Checks the tree under `root` (which holds `src/`); answers every violation, none when it keeps the rule. */
export function checkLayers(root: string): Violation[] {
  const src = path.join(root, 'src');
  const rel = (file: string) => path.relative(src, file).split(path.sep).join('/');
  const shown = (file: string) => path.relative(root, file).split(path.sep).join('/');
  const violations: Violation[] = [];
  const edges: Edge[] = [];

  for (const file of sourcesUnder(src)) {
    const from = rel(file);
    const target = targetOf(from);
    if (target === null) {
      violations.push({ file: shown(file), imports: '', rule: `src/${from.split('/')[0]} is no target: add it to TARGET_RULES in scripts/layers.ts` });
      continue;
    }
    const fromLayer = target === 'relay' ? relayLayerOf(from.slice('relay/'.length)) : -1;
    if (target === 'relay' && fromLayer < 0) {
      violations.push({ file: shown(file), imports: '', rule: 'this relay file is in no layer: add it to RELAY_LAYERS in scripts/layers.ts' });
      continue;
    }
    for (const { spec, typeOnly } of importsOf(file)) {
      const broken = (rule: string) => violations.push({ file: shown(file), imports: spec, rule });
      if (!spec.startsWith('.')) {
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
        if (target === 'contracts' && !CONTRACTS_PACKAGES.includes(name)) {
          broken(`contracts imports only ${CONTRACTS_PACKAGES.join(', ')} (it runs in the Worker, the host and the browser alike)`);
        }
        continue;
      }
      const to = rel(path.resolve(path.dirname(file), spec));
      if (to.startsWith('..')) {
        if (target === 'contracts') broken('contracts imports nothing from outside src/contracts');
        continue; // package.json, migrations: files of the repository, not of a target
      }
      const toTarget = targetOf(to);
      if (toTarget === null) continue; // reported as a file of no target
      if (toTarget !== target) {
        const access = TARGET_RULES[target][toTarget];
        if (access === undefined) broken(`${target} imports nothing from ${toTarget}`);
        else if (access === 'types' && !typeOnly) broken(`${target} imports only types from ${toTarget}: write it \`import type\``);
        if (!typeOnly) edges.push({ from: folderOf(from), to: folderOf(to), spec, file: shown(file) });
        continue;
      }
      if (target === 'relay') {
        const toLayer = relayLayerOf(to.slice('relay/'.length));
        if (toLayer > fromLayer) {
          const [lower, upper] = [RELAY_LAYERS[fromLayer].layer, RELAY_LAYERS[toLayer].layer];
          if (RELAY_LAYERS[fromLayer].noTypesFromAbove) broken(`relay ${lower} imports nothing from above it, not even types (${upper})`);
          else if (!typeOnly) broken(`relay ${lower} imports values only from the layers below it, not from ${upper} (types only: \`import type\`)`);
        }
      }
      if (!typeOnly) edges.push({ from: folderOf(from), to: folderOf(to), spec, file: shown(file) });
    }
  }

  for (const cycle of folderCycles(edges)) {
    violations.push({
      file: cycle[0].file,
      imports: [...cycle.map((e) => e.from), cycle[0].from].join(' -> '),
      rule: `a cycle of value imports between folders: ${cycle.map((e) => `${e.file} imports ${e.spec}`).join('; ')}`,
    });
  }
  return violations;
}

/** The strongly connected groups of folders (Tarjan), each as one cycle through it. */
function folderCycles(edges: Edge[]): Edge[][] {
  const next = new Map<string, Set<string>>();
  for (const edge of edges) {
    if (edge.from === edge.to) continue;
    if (!next.has(edge.from)) next.set(edge.from, new Set());
    next.get(edge.from)!.add(edge.to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) connect(v);
  return groups.map((folders) => cycleIn(folders, edges));
}

/** One cycle through a group of folders, from its first folder back to it: each step with a file that makes it. */
function cycleIn(folders: string[], edges: Edge[]): Edge[] {
  const inside = edges.filter((e) => e.from !== e.to && folders.includes(e.from) && folders.includes(e.to));
  const start = folders[0];
  const via = new Map<string, Edge>();
  const queue = [start];
  while (queue.length > 0) {
    const at = queue.shift()!;
    for (const edge of inside.filter((e) => e.from === at)) {
      if (edge.to === start) {
        const steps = [edge];
        for (let back = at; back !== start; back = via.get(back)!.from) steps.unshift(via.get(back)!);
        return steps;
      }
      if (!via.has(edge.to)) {
        via.set(edge.to, edge);
        queue.push(edge.to);
      }
    }
  }
  throw new Error(`no cycle through ${folders.join(', ')}`); // a strongly connected group always has one
}

if (import.meta.main) {
  const root = path.resolve(import.meta.dirname, '..');
  const violations = checkLayers(root);
  for (const v of violations) console.error(`${v.file}: ${v.imports ? `${v.imports}: ` : ''}${v.rule}`);
  console.log(violations.length === 0 ? 'The layers hold (DEVELOPERS.md, Layers).' : `${violations.length} imports break the layers (DEVELOPERS.md, Layers).`);
  process.exit(violations.length === 0 ? 0 : 1);
}
