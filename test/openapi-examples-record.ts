// The API document's examples from the tests' real bodies. `npm run openapi:examples [test files…]` runs the
// tests (all by default) with ATRIUM_RECORD_OPENAPI_EXAMPLES set, so that every server they start writes the
// JSON bodies it receives and answers (src/platform/http/example-recorder.ts); then, per operation and per
// request body or 2xx answer, it keeps the richest recorded body that its schema accepts once secrets are
// masked, loopback addresses made example.com and lists cut to three items, and writes them to
// src/platform/http/openapi-examples.recorded.json. Bodies no test recorded keep the example written from
// the schema (openapi-examples.ts). `--collect <dir>` collects an earlier recording without running tests.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openApiDocument } from '../src/openapi-document.ts';
import type { RecordedBody } from '../src/platform/http/example-recorder.ts';
import { RECORDED_EXAMPLES_FILE } from '../src/platform/http/openapi-examples.ts';
import { exampleChecker } from './openapi-example-validator.ts';

type Media = { schema?: object };
type Operation = { requestBody?: { content?: Record<string, Media> }; responses?: Record<string, { content?: Record<string, Media> }> };

const SECRET_KEY = /secret|password|passwd|token|credential|private.?key|api.?key|authorization/i;
const LOOPBACK_URL = /\bhttps?:\/\/(?:127\.0\.0\.1|localhost|\[::1\])(?::\d+)?/g;
const MAX_ITEMS = 3;

/** A recorded body as a reader may see it: no secret, no loopback address, short lists. */
export function tidy(value: unknown, key = ''): unknown {
  if (typeof value === 'string') {
    if (SECRET_KEY.test(key) && value.length > 0) return 'masked-example-value';
    return value.replace(LOOPBACK_URL, 'https://example.com');
  }
  if (Array.isArray(value)) return value.slice(0, MAX_ITEMS).map((v) => tidy(v, key));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, tidy(v, k)]));
  return value;
}

/** How much of the document an example shows: its leaves (a richer body is a better example). */
const leaves = (value: unknown): number =>
  Array.isArray(value)
    ? value.reduce((n: number, v) => n + leaves(v), 0)
    : value && typeof value === 'object'
      ? Object.values(value).reduce((n: number, v) => n + leaves(v), 0)
      : 1;

export async function collect(dir: string): Promise<{ kept: number; candidates: number }> {
  const doc = (await openApiDocument()) as { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, object> } };
  const check = exampleChecker(doc.components.schemas);
  const best = new Map<string, { body: unknown; score: number; size: number }>();
  let candidates = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.jsonl'))) {
    for (const line of readFileSync(path.join(dir, file), 'utf8').split('\n')) {
      if (!line) continue;
      const rec = JSON.parse(line) as RecordedBody;
      const op = doc.paths[rec.path]?.[rec.method.toLowerCase()];
      if (!op) continue;
      const content = rec.where === 'request' ? op.requestBody?.content : op.responses?.[rec.where]?.content;
      const schema = Object.entries(content ?? {}).find(([type]) => /^application\/([\w.+-]*\+)?json\b/.test(type))?.[1].schema;
      if (!schema) continue;
      candidates++;
      const body = tidy(rec.body);
      if (check(schema, body) !== null) continue;
      const key = `${rec.method} ${rec.path} ${rec.where}`;
      const score = leaves(body);
      const size = JSON.stringify(body).length;
      const held = best.get(key);
      if (!held || score > held.score || (score === held.score && size < held.size)) best.set(key, { body, score, size });
    }
  }
  const out: Record<string, unknown> = {};
  for (const key of [...best.keys()].sort()) out[key] = best.get(key)?.body;
  writeFileSync(RECORDED_EXAMPLES_FILE, `${JSON.stringify(out, null, 2)}\n`);
  return { kept: best.size, candidates };
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  let dir: string;
  let temporary = false;
  if (args[0] === '--collect') dir = path.resolve(args[1] ?? '');
  else {
    dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-examples-'));
    temporary = true;
    const run = spawnSync(process.execPath, ['test/run.ts', ...args], { stdio: 'inherit', env: { ...process.env, ATRIUM_RECORD_OPENAPI_EXAMPLES: dir } });
    if (run.status !== 0) process.stderr.write(`the tests exited with ${run.status}; collecting what they recorded\n`);
  }
  const { kept, candidates } = await collect(dir);
  if (temporary) rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${kept} examples from ${candidates} recorded bodies written to ${path.relative(process.cwd(), RECORDED_EXAMPLES_FILE)}\n`);
}
