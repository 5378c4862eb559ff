// A worker process (ATRIUM_ROLE=worker) serves no API, but with ATRIUM_METRICS_PORT it answers its own
// /metrics and /health/* there, so its delivery counters and readiness can be scraped; without it, no port.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestServer } from './helpers.ts';

test('a worker answers /metrics and /health/ready on ATRIUM_METRICS_PORT and serves no API', async () => {
  const worker = await startTestServer({ ATRIUM_ROLE: 'worker', ATRIUM_METRICS_PORT: '0' });
  try {
    assert.match(worker.baseUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    const metrics = await worker.request('GET', '/metrics');
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /^atrium_worker_up\{component="pgboss"\} 1$/m);
    assert.match(metrics.text, /^# TYPE atrium_webhook_deliveries_total counter$/m, 'the worker side counters are this process’s');
    const ready = await worker.request('GET', '/health/ready');
    assert.equal(ready.status, 200, ready.text);
    assert.equal(ready.body.checks.jobs, 'ok');
    assert.equal(ready.body.checks.backlog, 'ok');
    assert.equal((await worker.request('GET', '/api/v3/whoami')).status, 404);
  } finally {
    await worker.close();
  }
});

test('without ATRIUM_METRICS_PORT a worker listens on no port', async () => {
  const worker = await startTestServer({ ATRIUM_ROLE: 'worker' });
  try {
    assert.equal(worker.runtime.address, null);
    assert.equal(worker.runtime.app, null);
  } finally {
    await worker.close();
  }
});
