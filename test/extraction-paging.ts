// What the Data Extraction paging tests share: a page over HTTP, the same page by the plan pages had before
// keys-first (the reference answer), a write bound to a tenant, and a counter's samples by result.
import assert from 'node:assert/strict';
import type pg from 'pg';
import { executePage } from '../src/extraction/pages/execute.ts';
import type { ExecuteBody } from '../src/extraction/query/query-builder.ts';
import { plan } from '../src/extraction/service.ts';
import type { Principal } from '../src/platform/auth/principal.ts';
import type { DatabaseHandle } from '../src/platform/db/database.ts';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { appHeaders, type TestServer } from './helpers.ts';

export type Page = { data: unknown[]; totalCount: number };

/** The samples of `metric` (a counter with one `result` label) by result; those not yet seen are 0. */
export async function resultCounts<K extends string>(server: TestServer, metric: string, results: readonly K[]): Promise<Record<K, number>> {
  const res = await server.request('GET', '/metrics');
  const out = Object.fromEntries(results.map((r) => [r, 0])) as Record<K, number>;
  for (const m of res.text.matchAll(new RegExp(`^${metric}\\{result="(\\w+)"\\} (\\d+)`, 'gm'))) out[m[1] as K] = Number(m[2]);
  return out;
}

/** A page of DE-TimeSheets over HTTP, as the tenant's app. */
export async function httpPage(server: TestServer, tenant: TenantCredentials, body: ExecuteBody): Promise<Page> {
  const res = await server.request('POST', '/api/v3/analytics/named-query/DE-TimeSheets/dynamic-execute', { headers: appHeaders(tenant), json: body });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** The same page read with the plan pages had before keys-first: offset over every row, no kept state. */
export async function offsetPage(db: DatabaseHandle, tenant: TenantCredentials, body: ExecuteBody): Promise<Page> {
  const principal: Principal = { tenantId: tenant.tenantId, appId: null, userId: null, userName: null, roles: new Set(['Administrator']), via: 'app-headers' };
  const page = await db.withTenant(tenant.tenantId, async (trx) => {
    const p = await plan(trx, principal, 'DE-TimeSheets', body, true);
    return executePage(trx, p.query, p.plan, 'single-statement');
  });
  return JSON.parse(JSON.stringify(page));
}

/** A write bound to the tenant, as the API writes ($1 is the tenant). */
export async function touch(owner: pg.Client, tenant: TenantCredentials, sqlText: string): Promise<void> {
  await owner.query('begin');
  await owner.query(`select set_config('atrium.tenant_id', $1, true)`, [tenant.tenantId]);
  await owner.query(sqlText, [tenant.tenantId]);
  await owner.query('commit');
}
