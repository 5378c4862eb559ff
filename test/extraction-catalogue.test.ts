// Every named query of the catalogue (and every alias) answers 200 on a demo tenant with exactly the
// catalogue's keys in order; each Count query equals the totalCount of the query it counts (less the rows its
// platform statement leaves out: Draft jobs and projects).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CATALOGUE } from '../src/extraction/definition.ts';
import { NAMED_QUERIES } from '../src/extraction/queries/index.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let headers: Record<string, string>;

before(async () => {
  server = await startTestServer();
  const tenant = await server.createTenant('Catalogue', { demoData: true, scale: 0.05 });
  headers = appHeaders(tenant);
});
after(() => server?.close());

const run = (name: string, body: unknown) => server.request('POST', `/api/v3/analytics/named-query/${name}/dynamic-execute`, { headers, json: body });

test('every catalogue query has a definition', () => {
  const defined = new Set(NAMED_QUERIES.map((d) => d.name));
  const missing = CATALOGUE.filter((e) => !defined.has(e.name)).map((e) => e.name);
  assert.deepEqual(missing, [], `definitions missing: ${missing.join(', ')}`);
});

for (const entry of CATALOGUE) {
  for (const name of [entry.name, ...entry.aliases]) {
    test(`${name} answers its documented columns`, async (t) => {
      const res = await run(name, { queryBuilder: { take: 20 } });
      assert.equal(res.status, 200, res.text);
      const meta = await server.request('GET', `/api/v3/analytics/named-query/${name}/metadata`, { headers });
      assert.equal(meta.status, 200, meta.text);
      const fixed = entry.columns.filter((c) => c.name !== '*').map((c) => c.name);
      const names = meta.body.fields.map((f: { name: string }) => f.name);
      if (entry.dynamicColumns) {
        // The fixed columns, then one per user-defined field of the tenant.
        assert.deepEqual(names.slice(0, fixed.length), fixed);
      } else assert.deepEqual(names, fixed);
      for (const row of res.body.data) assert.deepEqual(Object.keys(row), names);
      assert.equal(typeof res.body.totalCount, 'number');
      if (res.body.totalCount === 0) t.diagnostic(`${name}: no rows on the demo tenant`);
    });
  }
}

for (const def of NAMED_QUERIES.filter((d) => d.countOf)) {
  test(`${def.name} equals the totalCount of ${def.countOf} for the same filters and parameters`, async () => {
    const base = CATALOGUE.find((e) => e.name === def.countOf)!;
    const parameters = Object.fromEntries(CATALOGUE.find((e) => e.name === def.name)!.parameters.map((p) => [p, null]));
    const filters = [base.columns[0].name, 'isnotblank'];
    for (const queryBuilder of [{}, { filters }]) {
      const counted = await run(def.name, { queryBuilder, parameters });
      const rows = await run(def.countOf!, { queryBuilder: { ...queryBuilder, take: 0 } });
      assert.equal(counted.status, 200, counted.text);
      assert.equal(rows.status, 200, rows.text);
      let left = 0;
      for (const value of def.countExcludes?.values ?? []) {
        const condition = [def.countExcludes!.column, '=', value];
        const excluded = await run(def.countOf!, { queryBuilder: { filters: 'filters' in queryBuilder ? [filters, 'and', condition] : [condition], take: 0 } });
        assert.equal(excluded.status, 200, excluded.text);
        left += excluded.body.totalCount;
      }
      assert.deepEqual(counted.body.data, [{ Count: rows.body.totalCount - left }]);
    }
  });
}
