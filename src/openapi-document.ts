// The OpenAPI document without a running server or database: the app is built in-process (routes only,
// nothing listens, no connection is opened) and asked for /openapi.json. `npm run lint:openapi` writes it
// for Redocly; the generated client's types (test/generated/) are made from it.
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from './config.ts';
import { DatabaseHandle } from './platform/db/database.ts';
import { buildApp } from './platform/http/app.ts';
import { createContext, registerSurfaces } from './server.ts';

export async function openApiDocument(env: Record<string, string> = {}, url = '/openapi.json'): Promise<Record<string, unknown>> {
  // The operator API is part of the document only when an admin token is configured; any value shows it.
  const config = loadConfig({ DATABASE_URL: 'postgres://atrium@127.0.0.1:1/atrium', ATRIUM_ADMIN_TOKEN: 'openapi-document-only', LOG_LEVEL: 'silent', ...env });
  const db = new DatabaseHandle(config.databaseUrl as string, {});
  const ctx = createContext(config, db, randomBytes(32));
  const app = await buildApp(ctx, (a) => registerSurfaces(a, ctx));
  try {
    const res = await app.inject({ method: 'GET', url });
    if (res.statusCode !== 200) throw new Error(`/openapi.json answered ${res.statusCode}: ${res.body}`);
    return res.json();
  } finally {
    await app.close();
    await db.close();
  }
}

if (import.meta.main) {
  const out = process.argv[2];
  const text = `${JSON.stringify(await openApiDocument(), null, 2)}\n`;
  if (out) {
    await mkdir(path.dirname(out), { recursive: true });
    await writeFile(out, text);
  } else process.stdout.write(text);
}
