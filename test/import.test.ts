// `atrium import` between two Atrium servers, HTTP only between them: a demo tenant of the first is
// imported into an empty tenant of the second, and the named queries compared on both sides as sets.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ImportError } from '../src/import/client.ts';
import { QUERY_IMPORTS } from '../src/import/mappings.ts';
import { runImport } from '../src/import/service.ts';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

/**
 * Columns that cannot be identical after an import, with the reason (docs/import.md lists the same).
 * Every other column of the queries the import reads must be.
 */
const UNCOMPARABLE: Record<string, string[]> = {
  // Images are files: queries show only whether one exists.
  'DE-Companies': ['CompanyHasImage', 'CreatedByHasImage', 'ModifiedByHasImage', 'Article', 'ArticleId', 'ProjectArticle'],
  'DE-Clients': ['ManagerHasImage', 'OwnerHasImage'],
  'DE-Taxes': ['CompanyHasImage'],
  'DE-Typologies': ['CompanyHasImage'],
  // Who approved a leave: approvals are rows of no named query (only the approvers' names are shown).
  'DE-Leaves': ['Approvers'],
};

/**
 * Columns this version does not give back yet (docs/import.md, "Not yet imported"): a client's stage is a
 * stage of the clients' workflow, and workflows are not imported yet. The test fails if more differ.
 */
const NOT_YET: Record<string, string[]> = {
  'DE-Clients': ['StageId', 'Stage', 'StageTypeId', 'StageType'],
};

/** The queries whose every row the import gives back (all their documented columns but UNCOMPARABLE's). */
const IMPORTED = [...new Set(QUERY_IMPORTS.map((q) => q.namedQuery))];

/** A loopback port nothing listens on (one just closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

async function rowsOf(server: TestServer, creds: TenantCredentials, namedQuery: string): Promise<Record<string, unknown>[]> {
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

/** The query's rows as a sorted list of JSON texts, without the `skip` columns. */
const asSet = (rows: Record<string, unknown>[], skip: string[] = []): string[] =>
  rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).filter(([k]) => !skip.includes(k)).sort(([a], [b]) => a.localeCompare(b))))).sort();

/** The columns whose values differ between two row sets (compared as sets of that one column with the key). */
function differingColumns(a: Record<string, unknown>[], b: Record<string, unknown>[]): string[] {
  const cols = Object.keys(a[0] ?? b[0] ?? {});
  return cols.filter((c) => {
    const x = a.map((r) => JSON.stringify(r[c])).sort();
    const y = b.map((r) => JSON.stringify(r[c])).sort();
    return JSON.stringify(x) !== JSON.stringify(y);
  });
}

describe('atrium import', () => {
  let source: TestServer;
  let target: TestServer;
  let from: TenantCredentials;
  let into: TenantCredentials;
  const importInto = (extra: Partial<Parameters<typeof runImport>[1]> = {}) =>
    runImport(target.runtime.ctx.db, {
      source: { baseUrl: source.baseUrl, tenantId: from.tenantId, appId: from.appId, appSecret: from.appSecret },
      tenantId: into.tenantId,
      ...extra,
    });

  before(async () => {
    [source, target] = await Promise.all([startTestServer(), startTestServer()]);
    [from, into] = await Promise.all([source.createTenant('Source Agency', { demoData: true, scale: 0.01 }), target.createTenant('Target Agency')]);
  });
  after(async () => {
    await Promise.all([source?.close(), target?.close()]);
  });

  test('wrong credentials and an unreachable source are one-line errors, and write nothing', async () => {
    await assert.rejects(
      runImport(target.runtime.ctx.db, {
        source: { baseUrl: source.baseUrl, tenantId: from.tenantId, appId: from.appId, appSecret: 'wrong' },
        tenantId: into.tenantId,
      }),
      (e: Error) => e instanceof ImportError && /credentials \(401\)/.test(e.message),
    );
    await assert.rejects(
      runImport(target.runtime.ctx.db, {
        source: { baseUrl: `http://127.0.0.1:${await closedPort()}`, tenantId: from.tenantId, appId: from.appId, appSecret: from.appSecret },
        tenantId: into.tenantId,
      }),
      (e: Error) => e instanceof ImportError && /unreachable/.test(e.message),
    );
    const runs = await target.runtime.ctx.db.withTenant(into.tenantId, (trx) => trx.selectFrom('import_runs').select('id').execute());
    assert.equal(runs.length, 0);
  });

  test('a full import gives back every row of the queries it reads; a re-run changes nothing', async () => {
    const report = await importInto();
    assert.ok(report.rowsRead > 0);
    const identical: string[] = [];
    const differing: string[] = [];
    for (const q of IMPORTED) {
      const [a, b] = await Promise.all([rowsOf(source, from, q), rowsOf(target, into, q)]);
      const skip = [...(UNCOMPARABLE[q] ?? []), ...(NOT_YET[q] ?? [])];
      if (JSON.stringify(asSet(a, skip)) === JSON.stringify(asSet(b, skip))) identical.push(q);
      else differing.push(`${q} (${a.length} vs ${b.length} rows; columns ${differingColumns(a, b).join(', ')})`);
    }
    process.stdout.write(`identical: ${identical.length}/${IMPORTED.length}\n${differing.map((d) => `  differs: ${d}`).join('\n')}\n`);
    assert.deepEqual(differing, []);

    const again = await importInto();
    assert.equal(again.changedRows, 0, JSON.stringify(again.queries.filter((q) => q.rowsWritten + q.rowsDeleted > 0)));
  });
});
