import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Budget, ExpressionError, evaluateValue } from './expressions.ts';
import { conceal, reveal, Secret, secretsOf } from './secret.ts';
import { jsonBytes, jsonPrefix } from './size.ts';

const scope = (values: Record<string, unknown>) => (name: string) =>
  Object.hasOwn(values, name) ? { found: true, value: values[name] } : { found: false, value: undefined };

test('jsonBytes counts like JSON, stops past its limit, and counts a shared value each time', () => {
  assert.equal(jsonBytes('abc', 100), 5);
  assert.equal(jsonBytes({ a: 1 }, 100), 2 + 1 + 8 + 1);
  const big = 'x'.repeat(1_000_000);
  const refs = Array.from({ length: 200 }, () => big);
  const n = jsonBytes(refs, 16 * 1024 * 1024);
  assert.ok(n > 16 * 1024 * 1024 && n < 20 * 1024 * 1024, `stopped soon after the limit (${n})`);
  assert.equal(jsonPrefix({ a: big }, 10).text.length, 10);
  assert.equal(jsonPrefix({ a: 'b' }, 100).complete, true);
});

test('pipes and templates refuse a result past the budget before making it', () => {
  const D = 'D'.repeat(4 * 1024 * 1024);
  assert.throws(() => evaluateValue("{{['D'] | Split('') | Join('')}}", scope({ D }), new Budget(16 * 1024 * 1024)), /Split into/);
  assert.throws(() => evaluateValue("{{['D']}}{{['D']}}{{['D']}}{{['D']}}{{['D']}}", scope({ D }), new Budget(16 * 1024 * 1024)), ExpressionError);
  assert.throws(() => evaluateValue("{{['D'] | ToBase64}}", scope({ D }), new Budget(4 * 1024 * 1024)), /ToBase64/);
  // One budget across the fields of an action.
  const budget = new Budget(10 * 1024 * 1024);
  evaluateValue("{{['D']}}", scope({ D }), budget);
  evaluateValue("{{['D']}}", scope({ D }), budget);
  assert.throws(() => evaluateValue("{{['D']}}", scope({ D }), budget), /output limit/);
});

test('a secret stays a secret through pipes, paths and texts, and shows as ******** unless revealed', () => {
  const cfg = secretsOf({ host: 'h.example.invalid', ftpPassword: 'pa55-word', nested: { apiToken: 't0k' } }) as Record<string, unknown>;
  assert.ok(cfg.ftpPassword instanceof Secret);
  assert.equal(cfg.host, 'h.example.invalid');
  const s = scope({ Cfg: cfg });
  const b64 = evaluateValue("{{['Cfg']$.ftpPassword | ToBase64}}", s);
  assert.ok(b64 instanceof Secret);
  assert.equal(reveal(b64), Buffer.from('pa55-word').toString('base64'));
  const text = evaluateValue("user:{{['Cfg']$.ftpPassword | ToUpperCase}}", s);
  assert.equal(String(text), '********');
  assert.equal(reveal(text), 'user:PA55-WORD');
  assert.equal(JSON.stringify(evaluateValue("{{['Cfg']}}", s)), '{"host":"h.example.invalid","ftpPassword":"********","nested":{"apiToken":"********"}}');
  assert.deepEqual(conceal({ a: [text] }), { a: ['********'] });
  const parts = evaluateValue("{{['Cfg']$.ftpPassword | Split('-')}}", s);
  assert.deepEqual(reveal(parts), ['pa55', 'word']);
  assert.equal(JSON.stringify(parts), '"********"');
});
