// Test helpers: a database of one's own cloned from the migrated template, a real server on a
// loopback port, and tenants created through the operator API.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { DestinationStream } from 'pino';
import { loadConfig } from '../src/config.ts';
import { type Runtime, startServer } from '../src/server.ts';
import type { TenantCredentials } from '../src/tenancy/service.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

function pgBaseUrl(): string {
  const url = process.env.ATRIUM_TEST_PG_URL;
  if (!url) throw new Error('Run tests with `npm test` (test/run.ts starts PostgreSQL and sets ATRIUM_TEST_PG_URL).');
  return url;
}

export async function createTestDatabase(): Promise<{ connectionString: string; drop: () => Promise<void> }> {
  const base = pgBaseUrl();
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${process.env.ATRIUM_TEST_TEMPLATE ?? 'atrium_template'}`);
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    connectionString: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

export interface TestServer {
  baseUrl: string;
  runtime: Runtime;
  databaseUrl: string;
  close: () => Promise<void>;
  /** fetch against the server; `json` is serialised with Content-Type application/json. */
  request: (method: string, path: string, opts?: { headers?: Record<string, string>; json?: unknown; body?: string | Buffer }) => Promise<TestResponse>;
  createTenant: (name?: string, opts?: { demoData?: boolean; scale?: number }) => Promise<TenantCredentials>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** opts.logDestination: the process logger's lines go there (set LOG_LEVEL in env to have any). */
export async function startTestServer(env: Record<string, string> = {}, opts: { logDestination?: DestinationStream } = {}): Promise<TestServer> {
  const database = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: database.connectionString,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ATRIUM_ADMIN_TOKEN: ADMIN_TOKEN,
    ATRIUM_SECRET_KEY: randomBytes(32).toString('hex'),
    ATRIUM_RATE_LIMIT_PER_MINUTE: '0',
    // `npm run openapi:examples` records the tests' real bodies for the API document's examples.
    ...(process.env.ATRIUM_RECORD_OPENAPI_EXAMPLES ? { ATRIUM_RECORD_OPENAPI_EXAMPLES: process.env.ATRIUM_RECORD_OPENAPI_EXAMPLES } : {}),
    DATA_DIR: `${process.env.TMPDIR ?? '/tmp'}/atrium-test-data-${database.connectionString.split('/').pop()}`,
    ...env,
  });
  const runtime = await startServer(config, () => {}, opts);
  const baseUrl = runtime.address ?? '';
  const request: TestServer['request'] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    let body: string | Buffer | undefined = opts.body;
    if (opts.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(opts.json);
    }
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body: body as BodyInit | undefined });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, text, body: parsed };
  };
  return {
    baseUrl,
    runtime,
    databaseUrl: database.connectionString,
    request,
    close: async () => {
      await runtime.close();
      await database.drop();
      // Exports written under the default DATA_DIR would otherwise pile up in TMPDIR; a caller's own DATA_DIR is theirs.
      if (!env.DATA_DIR) await rm(config.dataDir, { recursive: true, force: true });
    },
    createTenant: async (name = 'Test Agency', opts = {}) => {
      const res = await request('POST', '/admin/tenants', {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        json: { name, demoData: opts.demoData ?? false, scale: opts.scale ?? 1 },
      });
      if (res.status !== 201) throw new Error(`createTenant failed: ${res.status} ${res.text}`);
      return res.body as TenantCredentials;
    },
  };
}

export const appHeaders = (t: Pick<TenantCredentials, 'tenantId' | 'appId' | 'appSecret'>): Record<string, string> => ({
  'x-apptenant': t.tenantId,
  'x-appid': t.appId,
  'x-appsecret': t.appSecret,
});

/** The OpenAPI document with every `#/components/schemas/…` $ref replaced by the schema it names (our components have no cycles). */
export function inlineRefs<T>(doc: T): T {
  const schemas = (doc as { components?: { schemas?: Record<string, unknown> } }).components?.schemas ?? {};
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline);
    if (node === null || typeof node !== 'object') return node;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) return inline(schemas[ref.slice('#/components/schemas/'.length)]);
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, inline(v)]));
  };
  return inline(doc) as T;
}

/** The environment of a worker beside `server` (its database, data folder and secret key), with `extra`. */
export function workerEnv(server: TestServer, extra: Record<string, string> = {}): Record<string, string> {
  const config = server.runtime.ctx.config;
  return {
    DATABASE_URL: server.databaseUrl,
    ATRIUM_ROLE: 'worker',
    DATA_DIR: config.dataDir,
    ATRIUM_SECRET_KEY: config.secretKey ?? '',
    LOG_LEVEL: 'silent',
    ...extra,
  };
}

/** A worker beside `server` in a process of its own (a test may kill it), kept in `children` while it runs. */
export function spawnWorker(server: TestServer, children: Set<ChildProcess>, extra: Record<string, string> = {}): ChildProcess {
  const child = spawn(process.execPath, [path.resolve(import.meta.dirname, '../src/main.ts'), 'serve'], {
    env: { ...process.env, ...workerEnv(server, extra) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

/** Every row of a named query for the app, read as one NDJSON export (all documented columns, no paging). */
export async function namedQueryRows(server: TestServer, creds: TenantCredentials, namedQuery: string): Promise<Record<string, unknown>[]> {
  const res = await fetch(`${server.baseUrl}/api/v3/analytics/named-query/${namedQuery}/dynamic-execute`, {
    method: 'POST',
    headers: { ...appHeaders(creds), accept: 'application/x-ndjson', 'content-type': 'application/json' },
    body: JSON.stringify({ queryBuilder: {} }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, `${namedQuery}: ${text.slice(0, 300)}`);
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}
