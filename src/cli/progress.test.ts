import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatProgress, progressReporter } from './progress.ts';

test('a table reports nothing in its first second, then at most once a second; a small table prints no progress', () => {
  let t = 0;
  const out: string[] = [];
  const r = progressReporter({ write: (s) => out.push(s), tty: false }, { now: () => t });
  r.progress({ table: 'users', rows: 100, fraction: 1 });
  r.progress({ table: 'timesheets', rows: 1000, fraction: 0.01 });
  t = 900;
  r.progress({ table: 'timesheets', rows: 20_000, fraction: 0.2 });
  assert.deepEqual(out, []);
  t = 2000;
  r.progress({ table: 'timesheets', rows: 50_000, fraction: 0.25 });
  t = 2500;
  r.progress({ table: 'timesheets', rows: 60_000, fraction: 0.3 });
  assert.deepEqual(out, ['timesheets: 50,000 rows, 25,000 rows/s, 25 %, ETA 6 s\n']);
});

test('on a terminal the line is rewritten in place and cleared before the next log line', () => {
  let t = 0;
  const out: string[] = [];
  const r = progressReporter({ write: (s) => out.push(s), tty: true }, { now: () => t });
  r.progress({ table: 'timesheets', rows: 0, fraction: 0 });
  t = 1000;
  r.progress({ table: 'timesheets', rows: 10_000, fraction: 0.5 });
  r.log('timesheets: 20000 rows in 2000 ms');
  assert.deepEqual(out, ['\r\x1b[2Ktimesheets: 10,000 rows, 10,000 rows/s, 50 %, ETA 1 s', '\r\x1b[2K', 'timesheets: 20000 rows in 2000 ms\n']);
});

test('the ETA extrapolates the rate; unknown before any share is reached; minutes and hours for long loads', () => {
  assert.equal(formatProgress({ table: 't', rows: 0, fraction: 0 }, 1000), 't: 0 rows, 0 rows/s, 0 %, ETA ?');
  assert.equal(formatProgress({ table: 't', rows: 1000, fraction: 0.01 }, 1000), 't: 1,000 rows, 1,000 rows/s, 1 %, ETA 1 min 39 s');
  assert.equal(formatProgress({ table: 't', rows: 10, fraction: 0.0001 }, 1000), 't: 10 rows, 10 rows/s, 0 %, ETA 2 h 46 min');
});
