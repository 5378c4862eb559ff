// The layer rule of docs/architecture.md, read from the imports of src/: platform imports only platform;
// domain imports domain and platform; the demo generator imports demo, domain and platform; a surface
// imports its own files, demo, domain, platform, and another surface only through that surface's service
// module; server.ts, main.ts and openapi-document.ts sit on top and may import anything. And no runtime
// import cycle between files of src/ (an `import type` is erased before the program runs, so it may close
// a circle). Unit tests beside the code (*.test.ts) are not part of the program and are not read.
import assert from 'node:assert/strict';
import { globSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Each surface and the one module other surfaces may import it through (docs/architecture.md). */
export const SERVICE_MODULES: Readonly<Record<string, string | null>> = {
  extraction: 'src/extraction/service.ts',
  schedules: 'src/schedules/service.ts',
  integration: 'src/integration/service.ts',
  'client-api': 'src/client-api/service.ts',
  'custom-tables': 'src/custom-tables/service.ts',
  webhooks: 'src/webhooks/service.ts',
  automations: 'src/automations/service.ts',
  'user-feed': 'src/user-feed/service.ts',
  scim: null,
  mcp: null,
  'saved-queries': null,
  import: null,
  tenancy: 'src/tenancy/service.ts',
  cli: null,
};

const TOP = new Set(['src/server.ts', 'src/main.ts', 'src/openapi-document.ts']);

/** Imports that break the rule and are accepted for now, as "from -> to". Starts, and should stay, empty. */
const ALLOWED: ReadonlySet<string> = new Set<string>([]);

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

/** Every relative import and re-export of the program's files, resolved to a path under the root. */
export function importsOf(files: string[]): Edge[] {
  const edges: Edge[] = [];
  for (const from of files) {
    const source = ts.createSourceFile(from, readFileSync(path.join(ROOT, from), 'utf8'), ts.ScriptTarget.Latest, false);
    const add = (specifier: string, typeOnly: boolean) => {
      if (specifier.startsWith('.')) edges.push({ from, to: path.posix.join(path.posix.dirname(from), specifier), typeOnly });
    };
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        add(node.moduleSpecifier.text, node.importClause?.isTypeOnly === true);
      } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        add(node.moduleSpecifier.text, node.isTypeOnly);
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const [arg] = node.arguments;
        // A computed specifier cannot be checked; refuse it rather than miss an edge.
        if (!arg || !ts.isStringLiteral(arg)) throw new Error(`${from}: import() with a computed specifier`);
        add(arg.text, false);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return edges;
}

type Layer = { kind: 'top' } | { kind: 'platform' } | { kind: 'domain' } | { kind: 'demo' } | { kind: 'surface'; name: string };

export function layerOf(file: string): Layer {
  if (TOP.has(file)) return { kind: 'top' };
  if (file === 'src/config.ts') return { kind: 'platform' };
  const [, folder] = file.split('/');
  if (folder === 'platform') return { kind: 'platform' };
  if (folder === 'domain') return { kind: 'domain' };
  if (folder === 'demo') return { kind: 'demo' };
  if (folder in SERVICE_MODULES) return { kind: 'surface', name: folder };
  throw new Error(`${file} is in no layer: add its folder to SERVICE_MODULES (a surface) or TOP`);
}

/** Why an import breaks the layer rule, or null when it keeps it. */
export function violation(from: string, to: string): string | null {
  const a = layerOf(from);
  const b = layerOf(to);
  if (a.kind === 'top') return null;
  if (b.kind === 'top') return 'nothing imports server.ts, main.ts or openapi-document.ts';
  if (b.kind === 'platform') return null;
  if (a.kind === 'platform') return 'platform imports only platform';
  if (b.kind === 'domain') return null;
  if (a.kind === 'domain') return 'domain imports only domain and platform';
  if (b.kind === 'demo') return null;
  if (a.kind === 'demo') return 'the demo generator imports only demo, domain and platform';
  if (a.kind === 'surface' && b.kind === 'surface') {
    if (a.name === b.name) return null;
    const service = SERVICE_MODULES[b.name];
    if (to === service) return null;
    return service ? `another surface is used through ${service} only` : `${b.name} is used by no other surface`;
  }
  return 'no layer may import this';
}

/** The strongly connected groups (more than one file, or a file importing itself) of runtime imports. */
export function runtimeCycles(edges: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) {
    if (e.typeOnly) continue;
    const out = next.get(e.from);
    if (out) out.push(e.to);
    else next.set(e.from, [e.to]);
  }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
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
      if (group.length > 1 || next.get(v)?.includes(v)) groups.push(group.sort());
    }
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) connect(v);
  return groups;
}

let parsed: { files: string[]; edges: Edge[] } | undefined;
const program = () => {
  const files = programFiles();
  parsed ??= { files, edges: importsOf(files) };
  return parsed;
};

const programFiles = (): string[] =>
  globSync('src/**/*.ts', { cwd: ROOT })
    .map((f) => f.split(path.sep).join('/'))
    .filter((f) => !f.endsWith('.test.ts'))
    .sort();

test('every import of src/ keeps the layer rule (surfaces meet only through service modules)', () => {
  const { files, edges } = program();
  for (const service of Object.values(SERVICE_MODULES)) if (service) assert.ok(files.includes(service), `${service} is named but missing`);
  const broken = edges
    .filter((e) => !e.to.endsWith('.json'))
    .map((e) => ({ edge: `${e.from} -> ${e.to}`, why: violation(e.from, e.to) }))
    .filter((v) => v.why !== null && !ALLOWED.has(v.edge))
    .map((v) => `${v.edge}: ${v.why}`);
  assert.deepEqual(broken, []);
});

test('no runtime import cycle between files of src/ (import type excepted)', () => {
  assert.deepEqual(runtimeCycles(program().edges), []);
});

test('the check itself: a surface reaching into another, a layer pointing up, and a circle are caught', () => {
  assert.match(violation('src/mcp/write-tools.ts', 'src/client-api/documents/documents.ts') ?? '', /client-api\/service\.ts/);
  assert.equal(violation('src/mcp/write-tools.ts', 'src/client-api/service.ts'), null);
  assert.match(violation('src/scim/users.ts', 'src/mcp/tools.ts') ?? '', /used by no other surface/);
  assert.match(violation('src/platform/http/app.ts', 'src/domain/writes.ts') ?? '', /platform imports only platform/);
  assert.match(violation('src/domain/writes.ts', 'src/integration/service.ts') ?? '', /domain imports only/);
  assert.match(violation('src/extraction/service.ts', 'src/server.ts') ?? '', /nothing imports server\.ts/);
  assert.equal(violation('src/server.ts', 'src/mcp/routes.ts'), null);
  const edges = [
    { from: 'a.ts', to: 'b.ts', typeOnly: false },
    { from: 'b.ts', to: 'c.ts', typeOnly: false },
    { from: 'c.ts', to: 'a.ts', typeOnly: false },
    { from: 'c.ts', to: 'd.ts', typeOnly: false },
    { from: 'd.ts', to: 'c.ts', typeOnly: true },
  ];
  assert.deepEqual(runtimeCycles(edges), [['a.ts', 'b.ts', 'c.ts']]);
  assert.deepEqual(runtimeCycles(edges.slice(1)), []);
});
