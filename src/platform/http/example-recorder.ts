// Development only (ATRIUM_RECORD_OPENAPI_EXAMPLES=<dir>): the server appends the JSON bodies it really
// receives and answers (2xx only), a few per operation, to a file of that directory, so that
// `npm run openapi:examples` can take the API document's examples from the tests' real traffic.
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

/** A body larger than this is no example a reader wants to read. */
const MAX_BODY_CHARS = 16 * 1024;
/** Candidates kept per operation, place and process: the collector picks one. */
const MAX_PER_KEY = 5;

/** One line of a recording: the body of a request (`where: 'request'`) or of an answer (`where`: its status). */
export interface RecordedBody {
  method: string;
  /** The OpenAPI path template (`/api/users/{id}`). */
  path: string;
  where: string;
  body: unknown;
}

const isPlainJson = (v: unknown): boolean =>
  Array.isArray(v) || (v !== null && typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v)));

export function recordExamples(app: FastifyInstance, dir: string): void {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${process.pid}-${randomUUID()}.jsonl`);
  const counts = new Map<string, number>();
  const keep = (line: RecordedBody) => {
    const key = `${line.method} ${line.path} ${line.where}`;
    const n = counts.get(key) ?? 0;
    if (n >= MAX_PER_KEY) return;
    let text: string;
    try {
      text = JSON.stringify(line);
    } catch {
      return; // not JSON (a cycle, a BigInt): no example
    }
    if (text.length > MAX_BODY_CHARS) return;
    counts.set(key, n + 1);
    appendFileSync(file, `${text}\n`);
  };
  app.addHook('onSend', async (request, reply, payload) => {
    const route = request.routeOptions.url;
    if (!route || reply.statusCode < 200 || reply.statusCode >= 300) return payload;
    const common = { method: request.method, path: route.replace(/:(\w+)/g, '{$1}') };
    // Only a parsed body: a route that streams its body (custom-table imports) leaves a stream here.
    if (isPlainJson(request.body) && /json/.test(request.headers['content-type'] ?? '')) {
      keep({ ...common, where: 'request', body: request.body });
    }
    if (typeof payload === 'string' && payload.length <= MAX_BODY_CHARS && /json/.test(String(reply.getHeader('content-type') ?? ''))) {
      try {
        keep({ ...common, where: String(reply.statusCode), body: JSON.parse(payload) });
      } catch {
        // not JSON after all: nothing to record
      }
    }
    return payload;
  });
}
