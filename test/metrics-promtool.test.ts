// GET /metrics passes `promtool check metrics` (Prometheus's own linter: names, types, units, help), after
// traffic that fills the labelled series; label values stay within short fixed lists whatever the requests
// name. promtool comes from Debian's `prometheus` package (.ci/run installs it); without it the test skips.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const skip = promtool.error ? 'promtool is not installed (Debian package prometheus; .ci/run installs it)' : false;

let server: TestServer;

before(async () => {
  if (skip) return;
  server = await startTestServer();
});

after(async () => {
  await server?.close();
});

test('GET /metrics is clean for promtool check metrics, with bounded labels', { skip, timeout: 60_000 }, async () => {
  const tenant = await server.createTenant('Metrics Agency');
  const h = appHeaders(tenant);
  for (let i = 0; i < 5; i++) {
    assert.equal((await server.request('GET', '/api/webhook-subscriptions', { headers: h })).status, 200);
    assert.equal((await server.request('GET', `/no-such-route-${i}-${crypto.randomUUID()}`)).status, 404);
    assert.equal((await server.request('GET', `/api/webhook-subscriptions/${crypto.randomUUID()}`, { headers: h })).status, 404);
  }
  const res = await server.request('GET', '/metrics');
  assert.equal(res.status, 200);
  const checked = spawnSync('promtool', ['check', 'metrics'], { input: res.text, encoding: 'utf8' });
  assert.equal(checked.status, 0, `promtool check metrics:\n${checked.stdout}${checked.stderr}`);
  assert.equal(`${checked.stdout}${checked.stderr}`.trim(), '');

  // The renamed gauges, and the user feed's counters, are there; the _total gauges are not.
  for (const name of ['atrium_nodejs_active_handles_all', 'atrium_nodejs_active_requests_all', 'atrium_nodejs_active_resources_all'])
    assert.match(res.text, new RegExp(`^# TYPE ${name} gauge$`, 'm'));
  assert.doesNotMatch(res.text, /^atrium_nodejs_active_\w+_total/m);
  assert.match(res.text, /^# TYPE atrium_user_feed_runs_total counter$/m);
  assert.match(res.text, /^# TYPE atrium_user_feed_rows_total counter$/m);

  // docs/operations.md lists every metric the scrape has.
  const doc = readFileSync(path.join(import.meta.dirname, '..', 'docs', 'operations.md'), 'utf8');
  const names = [...res.text.matchAll(/^# TYPE (\S+) \w+$/gm)].map((m) => m[1]);
  assert.ok(names.length >= 40);
  assert.deepEqual(
    names.filter((n) => !doc.includes(`\`${n}\``)),
    [],
    'metrics missing from docs/operations.md',
  );

  // Routes are templates: no id, no unknown path becomes a label value.
  const routes = new Set([...res.text.matchAll(/route="([^"]*)"/g)].map((m) => m[1]));
  assert.ok(routes.has('/api/webhook-subscriptions/:id'), [...routes].join(', '));
  assert.ok(routes.has('unmatched'));
  for (const r of routes) assert.doesNotMatch(r, /[0-9a-f]{8}-[0-9a-f]{4}|no-such-route/, r);
  assert.doesNotMatch(res.text, new RegExp(tenant.tenantId));
});
