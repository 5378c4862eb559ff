// `atrium import` between two Atrium servers, HTTP only between them: a demo tenant of the first is
// imported into an empty tenant of the second, and the named queries compared on both sides as sets.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ImportError } from '../src/import/client.ts';
import { QUERY_IMPORTS } from '../src/import/mappings.ts';
import { runImport } from '../src/import/service.ts';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { ADMIN_TOKEN, appHeaders, startTestServer, type TestServer, workerEnv } from './helpers.ts';

/**
 * Columns that cannot be identical after an import, with the reason (docs/import.md lists the same).
 * Every other column of the queries the import reads must be.
 */
const UNCOMPARABLE: Record<string, string[]> = {
  // Images are files: queries show only whether one exists.
  'DE-Companies': ['CompanyHasImage', 'CreatedByHasImage', 'ModifiedByHasImage'],
  'DE-Services': ['CompanyHasImage'],
  'DE-ServicesGroups': ['CompanyHasImage'],
  'DE-ProjectsClassifications': ['CompanyHasImage'],
  'DE-ProjectsTypes': ['CompanyHasImage'],
  'DE-Clients': ['ManagerHasImage', 'OwnerHasImage'],
  'DE-Taxes': ['CompanyHasImage'],
  'DE-Typologies': ['CompanyHasImage'],
  // Who approved a leave: approvals are rows of no named query (only the approvers' names are shown).
  'DE-Leaves': ['Approvers'],
  'DE-Jobs': ['ClientHasImage', 'CompanyHasImage', 'CreatedByHasImage', 'ModifiedHasImage'],
  'DE-Comments': ['CreatedByHasImage'],
  'DE-CommentsReplies': ['CreatedByHasImage'],
  'DE-History': ['UserHasImage'],
  'DE-Types': ['CreatedByHasImage', 'ModifiedByHasImage'],
  'DE-Projects': ['CompanyHasImage', 'ClientHasImage', 'CreatedByHasImage', 'ModifiedHasImage'],
};

/**
 * Columns this version does not give back yet (docs/import.md, "Columns that differ"). The test fails if more differ.
 */
const NOT_YET: Record<string, string[]> = {
  // A document's sub-type is its type's business object type: requests and estimates are not imported
  // yet (jobs' and contracts' types are).
  'DE-Assignments': ['DocumentSubType'],
  // A project's rate card and column are shown by name only, and its estimated totals are its estimates':
  // rate cards and estimates are not imported yet.
  'DE-Projects': [
    'RateCard',
    'RateCardColumn',
    'EstimatedWithoutTaxCost',
    'EstimatedTaxCost',
    'EstimatedWithTaxCost',
    'EstimatedWithoutTaxSell',
    'EstimatedTaxSell',
    'EstimatedWithTaxSell',
  ],
};

/** The queries whose every row the import gives back (all their documented columns but UNCOMPARABLE's). */
const IMPORTED = [
  ...new Set(QUERY_IMPORTS.map((q) => q.namedQuery)),
  // The count queries of what is imported answer the same count.
  'DE-TimeSheetsCount',
  'DE-LeavesCount',
  'DE-TimeSheetsDeletedCount',
  'DE-LeavesDeletedCount',
  'DE-JobsCount',
  'DE-ProjectsCount',
  'DE-EstimatesCount',
  'DE-EstimatesQuotesCount',
  'DE-EstimatesQuotesMonthCount',
];

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
  rows
    .map((r) =>
      JSON.stringify(
        Object.fromEntries(
          Object.entries(r)
            .filter(([k]) => !skip.includes(k))
            .sort(([a], [b]) => a.localeCompare(b)),
        ),
      ),
    )
    .sort();

/** The columns whose values differ between two row sets (compared as sets of that one column with the key). */
function differingColumns(a: Record<string, unknown>[], b: Record<string, unknown>[]): string[] {
  const cols = Object.keys(a[0] ?? b[0] ?? {});
  return cols.filter((c) => {
    const x = a.map((r) => JSON.stringify(r[c])).sort();
    const y = b.map((r) => JSON.stringify(r[c])).sort();
    return JSON.stringify(x) !== JSON.stringify(y);
  });
}

/** The imported queries that differ between the source tenant and `into` (beyond the listed columns). */
async function differences(
  source: TestServer,
  from: TenantCredentials,
  target: TestServer,
  into: TenantCredentials,
): Promise<{ identical: string[]; differing: string[] }> {
  const identical: string[] = [];
  const differing: string[] = [];
  for (const q of IMPORTED) {
    const [a, b] = await Promise.all([rowsOf(source, from, q), rowsOf(target, into, q)]);
    const skip = [...(UNCOMPARABLE[q] ?? []), ...(NOT_YET[q] ?? [])];
    if (JSON.stringify(asSet(a, skip)) === JSON.stringify(asSet(b, skip))) identical.push(`${q} (${a.length})`);
    else differing.push(`${q} (${a.length} vs ${b.length} rows; columns ${differingColumns(a, b).join(', ')})`);
  }
  return { identical, differing };
}

/**
 * A stub proxy in front of `baseUrl`: every fifth request answers 429 with Retry-After: 1, every eleventh
 * 503; the rest are passed on (bodies streamed back as they come).
 */
async function throttlingProxy(baseUrl: string): Promise<{ url: string; close: () => Promise<void>; counts: { throttled: number; failed: number } }> {
  const counts = { throttled: 0, failed: 0 };
  let n = 0;
  const server = createHttpServer(async (req, res) => {
    n++;
    if (n % 5 === 0) {
      counts.throttled++;
      res.writeHead(429, { 'retry-after': '1' }).end();
      return;
    }
    if (n % 11 === 0) {
      counts.failed++;
      res.writeHead(503).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k)) as [string, string][],
    );
    const upstream = await fetch(`${baseUrl}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/octet-stream' });
    if (upstream.body) for await (const c of upstream.body) res.write(c);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    counts,
    close: () => new Promise((r) => server.close(() => r())),
  };
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
    const { identical, differing } = await differences(source, from, target, into);
    process.stdout.write(`identical: ${identical.length}/${IMPORTED.length}: ${identical.join(', ')}\n${differing.map((d) => `  differs: ${d}`).join('\n')}\n`);
    assert.deepEqual(differing, []);

    const again = await importInto();
    assert.equal(again.changedRows, 0, JSON.stringify(again.queries.filter((q) => q.rowsWritten + q.rowsDeleted > 0)));
  });

  test('--since after writes on the source (clients created, leaves changed and deleted, timesheets deleted) brings the target back to identical', async () => {
    const before = new Date(Date.now() - 1000).toISOString();
    const h = appHeaders(from);
    const leaves = await rowsOf(source, from, 'DE-Leaves');
    const writes: Promise<unknown>[] = [];
    // A commercial client of the Integration API needs its billing client (same externalId) first.
    for (let i = 0; i < 5; i++) {
      writes.push(
        source
          .request('POST', '/api/billingclients', { headers: h, json: { externalId: `IMP-${i}`, companyCode: from.companyCode, name: `Billing ${i}` } })
          .then(() => source.request('POST', '/api/commercialclients', { headers: h, json: { externalId: `IMP-${i}`, name: `Imported ${i}` } })),
      );
    }
    for (const l of leaves.slice(0, 5))
      writes.push(
        source.request('PATCH', `/api/leaves/${l.LeaveId}`, { headers: h, json: { IsHalfDay: { value: !l.IsHalfDay }, TotalMinutes: { value: 240 } } }),
      );
    for (const l of leaves.slice(5, 10)) writes.push(source.request('DELETE', `/api/leaves/${l.LeaveId}`, { headers: h }));
    const timesheets = await rowsOf(source, from, 'DE-TimeSheets');
    for (const t of timesheets.slice(0, 5)) writes.push(source.request('DELETE', `/api/timesheets/${t.TimesheetId}`, { headers: h }));
    const statuses = (await Promise.all(writes)).map((r) => (r as { status: number; text: string }).status);
    assert.ok(
      statuses.every((st) => st < 300),
      JSON.stringify(statuses),
    );
    const report = await importInto({ since: before });
    const changed = Object.fromEntries(
      report.queries.filter((q) => q.rowsWritten + q.rowsDeleted > 0).map((q) => [q.namedQuery, q.rowsWritten + q.rowsDeleted]),
    );
    assert.ok((changed['DE-LeavesDeleted'] ?? 0) >= 5 && (changed['DE-TimeSheetsDeleted'] ?? 0) >= 5, JSON.stringify(changed));
    assert.ok(report.queries.find((q) => q.namedQuery === 'DE-Users')?.incremental);
    assert.deepEqual((await differences(source, from, target, into)).differing, []);
  });

  test('a source answering 429 with Retry-After and an occasional 503 is imported completely; the wait is reported', async () => {
    const proxy = await throttlingProxy(source.baseUrl);
    try {
      const second = await target.createTenant('Throttled Target');
      const report = await runImport(target.runtime.ctx.db, {
        source: { baseUrl: proxy.url, tenantId: from.tenantId, appId: from.appId, appSecret: from.appSecret },
        tenantId: second.tenantId,
      });
      assert.ok(proxy.counts.throttled > 0 && proxy.counts.failed > 0);
      assert.equal(report.waiting.throttled, proxy.counts.throttled);
      assert.ok(report.waiting.waitedMs >= proxy.counts.throttled * 1000, JSON.stringify(report.waiting));
      assert.deepEqual((await differences(source, from, target, second)).differing, []);
    } finally {
      await proxy.close();
    }
  });

  test('the CLI killed with SIGKILL half-way, then run again, ends identical; it refuses a target that is not empty', async () => {
    const third = await target.createTenant('Killed Target');
    const env = { ...process.env, ...workerEnv(target), ATRIUM_ROLE: 'all', ATRIUM_IMPORT_APP_SECRET: from.appSecret };
    const args = [
      path.resolve(import.meta.dirname, '../src/main.ts'),
      'import',
      '--from',
      source.baseUrl,
      '--tenant',
      from.tenantId,
      '--app-id',
      from.appId,
      '--into',
      third.tenantId,
    ];
    const cli = (extra: string[] = []) => {
      const child = spawn(process.execPath, [...args, ...extra], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      let stdout = '';
      child.stdout.on('data', (d) => {
        stdout += d;
      });
      child.stderr.on('data', (d) => {
        stderr += d;
        // Killed once DE-Users is done: a few queries are checkpointed, the rest not read yet.
        if (/DE-Users: .*done/.test(stderr)) child.emit('users-done');
      });
      const exited = new Promise<{ code: number | null; signal: string | null; stderr: string; stdout: string }>((r) =>
        child.on('exit', (code, signal) => r({ code, signal, stderr, stdout })),
      );
      return { child, exited };
    };
    const first = cli();
    first.child.once('users-done', () => first.child.kill('SIGKILL'));
    const killed = await first.exited;
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    const second = cli(['--json']);
    const done = await second.exited;
    assert.equal(done.code, 0, done.stderr);
    const report = JSON.parse(done.stdout);
    assert.ok(
      report.queries.some((q: { resumed: boolean }) => q.resumed),
      'the re-run continued from the checkpoints',
    );
    assert.ok(!done.stdout.includes(from.appSecret) && !done.stderr.includes(from.appSecret), 'the secret is never printed');
    assert.deepEqual((await differences(source, from, target, third)).differing, []);

    // A tenant with data of its own (the source's demo data lives on the source; here: a user added) is refused.
    const busy = await target.createTenant('Busy Target');
    const added = await target.request('POST', '/api/users', {
      headers: appHeaders(busy),
      json: {
        UserName: 'someone',
        ExternalId: 'X-someone',
        IsActive: true,
        CompanyCode: busy.companyCode,
        DepartmentExternalId: busy.departmentExternalId,
        TypologyExternalId: busy.typologyExternalId,
      },
    });
    assert.equal(added.status, 201, added.text);
    const bad = spawn(process.execPath, [...args.slice(0, -1), busy.tenantId], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    bad.stderr.on('data', (d) => {
      err += d;
    });
    const code = await new Promise<number | null>((r) => bad.on('exit', r));
    assert.equal(code, 1, err);
    assert.match(err.trim(), /^atrium: target tenant .* is not empty \(2 users\); pass --merge/);
    assert.equal(err.trim().split('\n').length, 1);
  });

  test('POST /admin/tenants/{id}/import queues the import for the worker; its progress and report are readable', async () => {
    const fourth = await target.createTenant('Operator Target');
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const queued = await target.request('POST', `/admin/tenants/${fourth.tenantId}/import`, {
      headers: admin,
      json: { from: source.baseUrl, tenant: from.tenantId, appId: from.appId, appSecret: from.appSecret },
    });
    assert.equal(queued.status, 202, queued.text);
    assert.equal(queued.body.status, 'Queued');
    assert.ok(!queued.text.includes(from.appSecret));
    let run = queued.body;
    for (let i = 0; i < 600 && (run.status === 'Queued' || run.status === 'Running'); i++) {
      await new Promise((r) => setTimeout(r, 250));
      const res = await target.request('GET', `/admin/tenants/${fourth.tenantId}/imports/${queued.body.runId}`, { headers: admin });
      assert.equal(res.status, 200, res.text);
      run = res.body;
    }
    assert.equal(run.status, 'Completed', JSON.stringify(run));
    assert.ok(run.report.rowsRead > 0 && run.progress.lastQuery);
    assert.deepEqual((await differences(source, from, target, fourth)).differing, []);
    const sealed = await target.runtime.ctx.db.withTenant(fourth.tenantId, (trx) =>
      trx.selectFrom('import_runs').select('credentials_sealed').where('id', '=', queued.body.runId).executeTakeFirstOrThrow(),
    );
    assert.equal(sealed.credentials_sealed, null, 'the credentials are dropped once the run ends');
    const bad = await target.request('POST', `/admin/tenants/${fourth.tenantId}/import`, {
      headers: admin,
      json: { from: source.baseUrl, tenant: from.tenantId, appId: from.appId, appSecret: 'x', only: ['DE-Nope'] },
    });
    assert.equal(bad.status, 400);
    assert.match(bad.body.detail ?? bad.text, /does not read DE-Nope/);
  });
});
