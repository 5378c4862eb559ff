// `atrium import`: the options to an import, a progress line per query on stderr (rows, rows/s, ETA when
// known), and the report (JSON with --json). The app secret comes from --app-secret or
// ATRIUM_IMPORT_APP_SECRET and is never printed.
import type { SecretBox } from '../platform/auth/hashing.ts';
import type { DatabaseHandle } from '../platform/db/database.ts';
import { ImportError } from './client.ts';
import { type ImportReport, type QueryProgress, runImport } from './service.ts';

/** The command line's options an import reads (src/cli/args.ts parses them). */
export interface ImportOptions {
  from?: string;
  tenant?: string;
  'app-id'?: string;
  'app-secret'?: string;
  user?: string;
  since?: string;
  only?: string;
  merge?: boolean;
  json?: boolean;
}

export async function importCommand(
  values: ImportOptions,
  targetTenantId: string,
  db: DatabaseHandle,
  webhooks?: { box: SecretBox; allowPrivateNetworks: boolean },
): Promise<number> {
  const appSecret = values['app-secret'] ?? process.env.ATRIUM_IMPORT_APP_SECRET;
  if (!appSecret) throw new ImportError('no app secret: pass --app-secret or set ATRIUM_IMPORT_APP_SECRET');
  const only = values.only
    ?.split(',')
    .map((q) => q.trim())
    .filter(Boolean);
  const report = await runImport(db, {
    source: { baseUrl: values.from!, tenantId: values.tenant!, appId: values['app-id']!, appSecret, userId: values.user },
    tenantId: targetTenantId,
    since: values.since,
    only,
    merge: values.merge ?? false,
    onProgress: progressLine,
    webhooks,
  });
  process.stdout.write(`${values.json ? JSON.stringify(report, null, 2) : describe(report)}\n`);
  return 0;
}

let lastLine = 0;
function progressLine(p: QueryProgress): void {
  const now = Date.now();
  // At most a line a second while a query runs, and always its last.
  if (!p.done && now - lastLine < 1000) return;
  lastLine = now;
  const rate = p.elapsedMs > 0 ? Math.round((p.rowsRead * 1000) / p.elapsedMs) : p.rowsRead;
  const eta = p.expected !== null && rate > 0 ? `, ETA ${Math.max(0, Math.round((p.expected - p.rowsRead) / rate))} s` : '';
  process.stderr.write(`${p.namedQuery}: ${p.rowsRead} rows, ${rate} rows/s${p.done ? ', done' : eta}\n`);
}

function describe(r: ImportReport): string {
  const lines = r.queries.map(
    (q) =>
      `  ${q.namedQuery.padEnd(30)} read ${String(q.rowsRead).padStart(8)}  written ${String(q.rowsWritten).padStart(8)}  deleted ${String(q.rowsDeleted).padStart(6)}${q.incremental ? '  (since)' : ''}${q.resumed ? '  (resumed)' : ''}`,
  );
  return [
    `Imported from ${r.source} into tenant ${r.tenantId}${r.since ? ` (changes since ${r.since})` : ''} in ${(r.elapsedMs / 1000).toFixed(1)} s.`,
    ...lines,
    `Rows read: ${r.rowsRead}; changed rows: ${r.changedRows}.`,
    ...(r.webhookSecrets.length
      ? ['Webhook subscriptions created inactive, each with a new secret (shown once; activate them once the receivers know it):']
      : []),
    ...r.webhookSecrets.map((w) => `  ${w.id}  ${w.name}: ${w.secret}`),
    ...(r.leftOut.length ? ['Left out:', ...r.leftOut.map((l) => `  - ${l}`)] : []),
    `Waited on the source: ${(r.waiting.waitedMs / 1000).toFixed(1)} s (${r.waiting.throttled} × 429, ${r.waiting.retried} retries).`,
    'Not carried over (set up by hand):',
    ...r.notCarriedOver.map((n) => `  - ${n.what}: ${n.why}. ${n.setUp}.`),
  ].join('\n');
}
