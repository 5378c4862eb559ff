// The parts of tracing that need no collector: which OTEL_* settings turn it on and how they are read, and
// the statement text a span may carry (no literal value of any kind).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sanitizeSql, tracingConfigFrom } from './tracing.ts';

test('tracing is off without an endpoint, or when disabled; the standard variables are read', () => {
  const problems: string[] = [];
  assert.equal(tracingConfigFrom({}, problems), null);
  assert.equal(tracingConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }, problems), null);
  assert.equal(tracingConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' }, problems), null);
  const c = tracingConfigFrom(
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/',
      OTEL_SERVICE_NAME: 'atrium-api',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=production,team=ops%20one',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc',
    },
    problems,
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(c, {
    tracesUrl: 'http://127.0.0.1:4318/v1/traces',
    serviceName: 'atrium-api',
    sampler: 'parentbased_traceidratio',
    samplerArg: 0.25,
    resourceAttributes: { 'deployment.environment': 'production', team: 'ops one' },
    headers: { 'x-api-key': 'abc' },
  });
  assert.equal(tracingConfigFrom({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/custom' }, problems)?.tracesUrl, 'http://collector:4318/custom');
  tracingConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://x', OTEL_TRACES_SAMPLER: 'sometimes', OTEL_TRACES_SAMPLER_ARG: '2' }, problems);
  assert.equal(problems.length, 3, problems.join('\n'));
});

test('statement text keeps its shape and loses every literal', () => {
  assert.equal(
    sanitizeSql("begin; select set_config('atrium.tenant_id', '3f1c2a64-8b1e-4c5d-9a7f-2e6b1d0c4a91', true), set_config('statement_timeout', '29950', true)"),
    'begin; select set_config(?, ?, true), set_config(?, ?, true)',
  );
  assert.equal(
    sanitizeSql('select "t1".a from t1 where x = $1 and y > 42 and z = -3.5e2 limit 10'),
    'select "t1".a from t1 where x = $1 and y > ? and z = ? limit ?',
  );
  assert.equal(sanitizeSql("insert into n (v) values ('it''s', $tag$secret$tag$, $$x$$)"), 'insert into n (v) values (?, ?, ?)');
});
