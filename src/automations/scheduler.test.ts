import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextFireTime } from './scheduler.ts';

const at = (s: string) => new Date(s);
const anchor = at('2024-01-01T00:00:00Z');

test('every unit × periodicity from startDateUtc, strictly after the given time', () => {
  const s = { unit: 6, periodicity: 'Minutes' as const, startDateUtc: '2024-01-01T10:03:00.000Z', isActive: true };
  assert.equal(nextFireTime(s, at('2024-01-01T09:00:00Z'), anchor)?.toISOString(), '2024-01-01T10:03:00.000Z');
  assert.equal(nextFireTime(s, at('2024-01-01T10:03:00Z'), anchor)?.toISOString(), '2024-01-01T10:09:00.000Z');
  assert.equal(nextFireTime(s, at('2024-01-01T11:00:30Z'), anchor)?.toISOString(), '2024-01-01T11:03:00.000Z');
  assert.equal(nextFireTime({ unit: 2, periodicity: 'Hours' }, at('2024-01-01T03:00:00Z'), anchor)?.toISOString(), '2024-01-01T04:00:00.000Z');
  assert.equal(nextFireTime({ unit: 1, periodicity: 'Weeks' }, at('2024-01-03T00:00:00Z'), anchor)?.toISOString(), '2024-01-08T00:00:00.000Z');
  assert.equal(nextFireTime({ unit: 1, periodicity: 'Days', isActive: false }, at('2024-01-03T00:00:00Z'), anchor), null);
  assert.equal(nextFireTime(null, at('2024-01-03T00:00:00Z'), anchor), null);
});

test("months are calendar months from the start; the 31st falls on shorter months' last day", () => {
  const s = { unit: 1, periodicity: 'Months' as const, startDateUtc: '2024-01-31T04:00:00.000Z' };
  assert.equal(nextFireTime(s, at('2024-02-01T00:00:00Z'), anchor)?.toISOString(), '2024-02-29T04:00:00.000Z');
  assert.equal(nextFireTime(s, at('2024-03-01T00:00:00Z'), anchor)?.toISOString(), '2024-03-31T04:00:00.000Z');
  assert.equal(nextFireTime({ ...s, unit: 3 }, at('2024-02-01T00:00:00Z'), anchor)?.toISOString(), '2024-04-30T04:00:00.000Z');
});

test('a five-field UTC cron instead', () => {
  assert.equal(nextFireTime({ cronExpression: '0 4 * * *' }, at('2024-01-01T04:00:00Z'), anchor)?.toISOString(), '2024-01-02T04:00:00.000Z');
});
