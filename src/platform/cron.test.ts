// CronExpression without a database: fire times (month ends, leap days, day-of-month OR day-of-week, names, Sunday
// as 0 and 7), the latest run, descriptions, every error shape, and a generated sample checked against an
// independent matcher so that whatever validateCron admits, cron-parser (what pg-boss fires by) reads the same way.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import { CronExpressionParser } from 'cron-parser';
import { CronError, type CronField, describeCron, latestRun, nextRuns, normalizeCron, validateCron } from './cron.ts';

const iso = (dates: Date[]) => dates.map((d) => d.toISOString());
const at = (text: string) => new Date(text);

describe('nextRuns', () => {
  // [expression, after, expected fire times]
  const CASES: [string, string, string[]][] = [
    ['* * * * *', '2026-01-01T00:00:30Z', ['2026-01-01T00:01', '2026-01-01T00:02', '2026-01-01T00:03', '2026-01-01T00:04', '2026-01-01T00:05']],
    ['* * * * *', '2026-12-31T23:58:00Z', ['2026-12-31T23:59', '2027-01-01T00:00', '2027-01-01T00:01', '2027-01-01T00:02', '2027-01-01T00:03']],
    ['5 0 * * *', '2026-06-15T12:00:00Z', ['2026-06-16T00:05', '2026-06-17T00:05', '2026-06-18T00:05', '2026-06-19T00:05', '2026-06-20T00:05']],
    // Friday 2026-01-02 17:40: one more quarter in the 17 o'clock hour, then the weekend is skipped.
    ['*/15 9-17 * * 1-5', '2026-01-02T17:40:00Z', ['2026-01-02T17:45', '2026-01-05T09:00', '2026-01-05T09:15', '2026-01-05T09:30', '2026-01-05T09:45']],
    // Month ends: only months with a 31st; strictly after the fire time given.
    ['0 0 31 * *', '2026-01-31T00:00:00Z', ['2026-03-31T00:00', '2026-05-31T00:00', '2026-07-31T00:00', '2026-08-31T00:00', '2026-10-31T00:00']],
    ['0 0 30 * *', '2026-01-30T00:00:00Z', ['2026-03-30T00:00', '2026-04-30T00:00', '2026-05-30T00:00', '2026-06-30T00:00', '2026-07-30T00:00']],
    ['0 0 30 * *', '2028-01-31T00:00:00Z', ['2028-03-30T00:00', '2028-04-30T00:00', '2028-05-30T00:00', '2028-06-30T00:00', '2028-07-30T00:00']],
    ['59 23 28-31 2 *', '2027-02-27T00:00:00Z', ['2027-02-28T23:59', '2028-02-28T23:59', '2028-02-29T23:59', '2029-02-28T23:59', '2030-02-28T23:59']],
    // Leap days, and 2100, which is not a leap year.
    ['0 12 29 2 *', '2026-03-01T00:00:00Z', ['2028-02-29T12:00', '2032-02-29T12:00', '2036-02-29T12:00', '2040-02-29T12:00', '2044-02-29T12:00']],
    ['0 12 29 2 *', '2096-03-01T00:00:00Z', ['2104-02-29T12:00', '2108-02-29T12:00', '2112-02-29T12:00', '2116-02-29T12:00', '2120-02-29T12:00']],
    // Both day fields restricted: Mondays of February OR the 29th (a Tuesday in 2028). AND would give no day in 2028.
    ['0 0 29 2 1', '2028-02-01T00:00:00Z', ['2028-02-07T00:00', '2028-02-14T00:00', '2028-02-21T00:00', '2028-02-28T00:00', '2028-02-29T00:00']],
    ['0 0 29 2 1', '2028-02-29T00:00:00Z', ['2029-02-05T00:00', '2029-02-12T00:00', '2029-02-19T00:00', '2029-02-26T00:00', '2030-02-04T00:00']],
    // The 1st (Sunday 2026-03-01) OR Mondays.
    ['0 0 1 * 1', '2026-02-01T00:00:00Z', ['2026-02-02T00:00', '2026-02-09T00:00', '2026-02-16T00:00', '2026-02-23T00:00', '2026-03-01T00:00']],
    // Names in any case: Friday 30 January, then July (1 July 2026 is a Wednesday).
    ['0 8 * JAN,jul mon-fri', '2026-01-29T12:00:00Z', ['2026-01-30T08:00', '2026-07-01T08:00', '2026-07-02T08:00', '2026-07-03T08:00', '2026-07-06T08:00']],
    // Sunday as 0, 7 or SUN; 4 January 2026 is a Sunday.
    ['0 0 * * 0', '2026-01-01T00:00:00Z', ['2026-01-04T00:00', '2026-01-11T00:00', '2026-01-18T00:00', '2026-01-25T00:00', '2026-02-01T00:00']],
    ['0 0 * * 7', '2026-01-01T00:00:00Z', ['2026-01-04T00:00', '2026-01-11T00:00', '2026-01-18T00:00', '2026-01-25T00:00', '2026-02-01T00:00']],
    ['0 0 * * sun', '2026-01-01T00:00:00Z', ['2026-01-04T00:00', '2026-01-11T00:00', '2026-01-18T00:00', '2026-01-25T00:00', '2026-02-01T00:00']],
    ['0 0 * * 5-7', '2026-01-01T00:00:00Z', ['2026-01-02T00:00', '2026-01-03T00:00', '2026-01-04T00:00', '2026-01-09T00:00', '2026-01-10T00:00']],
    // `a/n` runs to the field's maximum: in day of week 1-7/2, so Mon, Wed, Fri and Sun.
    ['0 0 * * 1/2', '2026-01-01T00:00:00Z', ['2026-01-02T00:00', '2026-01-04T00:00', '2026-01-05T00:00', '2026-01-07T00:00', '2026-01-09T00:00']],
    ['5/20 * * * *', '2026-01-01T00:00:00Z', ['2026-01-01T00:05', '2026-01-01T00:25', '2026-01-01T00:45', '2026-01-01T01:05', '2026-01-01T01:25']],
    ['0 0 1 JAN/4 *', '2026-01-01T00:00:00Z', ['2026-05-01T00:00', '2026-09-01T00:00', '2027-01-01T00:00', '2027-05-01T00:00', '2027-09-01T00:00']],
    ['  30   6\t1 * *  ', '2026-01-01T00:00:00Z', ['2026-01-01T06:30', '2026-02-01T06:30', '2026-03-01T06:30', '2026-04-01T06:30', '2026-05-01T06:30']],
  ];
  for (const [expression, after, expected] of CASES) {
    test(`${expression.trim()} after ${after}`, () => {
      assert.deepEqual(
        iso(nextRuns(expression, at(after))),
        expected.map((e) => `${e}:00.000Z`),
      );
    });
  }

  test('strictly after the given instant, to the millisecond', () => {
    assert.deepEqual(iso(nextRuns('5 0 * * *', at('2026-01-01T00:04:59.999Z'), 1)), ['2026-01-01T00:05:00.000Z']);
    assert.deepEqual(iso(nextRuns('5 0 * * *', at('2026-01-01T00:05:00.000Z'), 1)), ['2026-01-02T00:05:00.000Z']);
    assert.deepEqual(iso(nextRuns('5 0 * * *', at('2026-01-01T00:05:00.500Z'), 1)), ['2026-01-02T00:05:00.000Z']);
  });

  test('macros fire as their five-field forms', () => {
    const after = at('2026-05-17T13:14:15Z');
    for (const [macro, fields] of [
      ['@hourly', '0 * * * *'],
      ['@daily', '0 0 * * *'],
      ['@weekly', '0 0 * * 0'],
      ['@monthly', '0 0 1 * *'],
      ['@yearly', '0 0 1 1 *'],
      ['@annually', '0 0 1 1 *'],
    ]) {
      assert.deepEqual(iso(nextRuns(macro, after, 3)), iso(nextRuns(fields, after, 3)), macro);
    }
  });

  test('count is 5 by default and bounded', () => {
    assert.equal(nextRuns('0 0 * * *', at('2026-01-01T00:00:00Z')).length, 5);
    assert.equal(nextRuns('0 0 * * *', at('2026-01-01T00:00:00Z'), 12).length, 12);
    assert.throws(() => nextRuns('0 0 * * *', new Date(), 0), RangeError);
    assert.throws(() => nextRuns('0 0 * * *', new Date(), 1.5), RangeError);
    assert.throws(() => nextRuns('0 0 * * *', new Date('nonsense')), RangeError);
  });

  test('an invalid expression throws the CronError, not a cron-parser message', () => {
    assert.throws(() => nextRuns('0 0 L * *', new Date()), CronError);
    assert.throws(() => latestRun('61 * * * *', new Date()), CronError);
    assert.throws(() => describeCron('* * * * * *'), CronError);
  });

  test('the cron-parser we read is the one pg-boss fires by', () => {
    const ours = createRequire(import.meta.url).resolve('cron-parser');
    const pgBoss = createRequire(import.meta.resolve('pg-boss')).resolve('cron-parser');
    assert.equal(pgBoss, ours);
  });
});

describe('latestRun', () => {
  const CASES: [string, string, string | null][] = [
    ['5 0 * * *', '2026-01-01T00:05:00.000Z', '2026-01-01T00:05:00.000Z'], // at a fire time: that one
    ['5 0 * * *', '2026-01-01T00:05:00.001Z', '2026-01-01T00:05:00.000Z'], // just after
    ['5 0 * * *', '2026-01-01T00:05:59.999Z', '2026-01-01T00:05:00.000Z'],
    ['5 0 * * *', '2026-01-01T00:04:59.999Z', '2025-12-31T00:05:00.000Z'], // just before: the day before
    ['0 0 31 * *', '2026-03-30T00:00:00Z', '2026-01-31T00:00:00.000Z'],
    ['0 12 29 2 *', '2025-01-01T00:00:00Z', '2024-02-29T12:00:00.000Z'],
    ['0 12 29 2 *', '2026-03-01T00:00:00Z', null], // 2024-02-29 is more than 400 days back
  ];
  for (const [expression, atOrBefore, expected] of CASES) {
    test(`${expression} at or before ${atOrBefore}`, () => {
      assert.equal(latestRun(expression, at(atOrBefore))?.toISOString() ?? null, expected);
    });
  }
});

describe('describeCron', () => {
  const CASES: [string, string][] = [
    ['5 0 * * *', 'At 00:05, every day (UTC)'],
    ['05 00 * * *', 'At 00:05, every day (UTC)'],
    ['* * * * *', 'Every minute, every hour, every day (UTC)'],
    ['*/15 9-17 * * 1-5', 'Every 15 minutes, between 09:00 and 17:59, Monday through Friday (UTC)'],
    ['0 */6 * * *', 'On the hour, every 6 hours, every day (UTC)'],
    ['30 6 1 * *', 'At 06:30, on day 1 of the month (UTC)'],
    ['15 3 1,15 * *', 'At 03:15, on day 1 and 15 of the month (UTC)'],
    ['0 0 31 * *', 'At 00:00, on day 31 of the month (UTC)'],
    ['0 12 29 2 *', 'At 12:00, on day 29 of the month, only in February (UTC)'],
    ['0 0 1 * 1', 'At 00:00, on day 1 of the month, and on Monday (UTC)'],
    ['0 8 * JAN,jul mon-fri', 'At 08:00, Monday through Friday, only in January and July (UTC)'],
    ['0 0 * * 7', 'At 00:00, only on Sunday (UTC)'],
    ['0 0 * * 5-7', 'At 00:00, Friday through Sunday (UTC)'],
    // Forms cronstrue reads unlike cron, spelled out before it reads them.
    ['0 0 * * 0-7', 'At 00:00, Sunday through Saturday (UTC)'],
    ['0 0 * * 1/2', 'At 00:00, only on Sunday, Monday, Wednesday, and Friday (UTC)'],
    ['0 0 * * */2', 'At 00:00, only on Sunday, Tuesday, Thursday, and Saturday (UTC)'],
    ['5/15 * * * *', 'Every 15 minutes, starting at 5 minutes past the hour, every hour, every day (UTC)'],
    ['@daily', 'At 00:00, every day (UTC)'],
    ['@weekly', 'At 00:00, only on Sunday (UTC)'],
    ['@hourly', 'Every hour, every day (UTC)'],
  ];
  for (const [expression, expected] of CASES) {
    test(expression, () => assert.equal(describeCron(expression), expected));
  }
});

describe('validateCron', () => {
  const VALID = [
    '* * * * *',
    '0 0 1 1 *',
    '59 23 31 12 7',
    '0-59/5 0-23 1-31 1-12 0-7',
    '*/1 */1 */1 */1 */1',
    '1,2,3-5,10-20/5 * * * *',
    '0 0 * Jan-Mar,OCT sun,Wed-fri',
    '0 0 31 1,2 *', // the 31st exists in January
    '0 0 31 2 1', // never the 31st of February, but Mondays (OR)
    '0 0 29 2 *',
    '\t0  0 * * *\n',
    '@yearly',
    '@annually',
    '@monthly',
    '@weekly',
    '@daily',
    '@hourly',
  ];
  for (const expression of VALID) {
    test(`accepts ${JSON.stringify(expression)}`, () => {
      validateCron(expression);
      // and cron-parser, called as pg-boss calls it, accepts it too
      CronExpressionParser.parse(normalizeCron(expression), { tz: 'UTC', strict: false });
    });
  }

  const field = (name: string, raw: string, detail: string) => `CronExpression: the ${name} field "${raw}" ${detail}`;
  const COUNT = (n: number) => `CronExpression must have five fields (minute hour day-of-month month day-of-week); got ${n}`;
  const EXTENSION = ' (L, W, #, ? and H are not standard cron)';
  const MACRO = (m: string) =>
    `CronExpression "${m}" is not supported; use five fields (minute hour day-of-month month day-of-week) or one of @yearly, @annually, @monthly, @weekly, @daily, @hourly`;
  // [expression, field at fault, message]
  const ERRORS: [string, CronField | null, string][] = [
    ['', null, 'CronExpression is empty; it needs five fields (minute hour day-of-month month day-of-week)'],
    ['   ', null, 'CronExpression is empty; it needs five fields (minute hour day-of-month month day-of-week)'],
    ['0 0 * * * *', null, COUNT(6)], // a seconds field
    ['0 0 * *', null, COUNT(4)],
    ['daily', null, COUNT(1)],
    ['@midnight', null, MACRO('@midnight')],
    ['@reboot', null, MACRO('@reboot')],
    ['@weekdays', null, MACRO('@weekdays')],
    ['@DAILY', null, MACRO('@DAILY')],
    [`${'0'.repeat(1100)} * * * *`, null, 'CronExpression is too long: 1108 characters, at most 1024'],
    // out of range, per field
    ['61 * * * *', 'minute', field('minute', '61', 'is out of range 0-59')],
    ['* 24 * * *', 'hour', field('hour', '24', 'is out of range 0-23')],
    ['* * 0 * *', 'day-of-month', field('day-of-month', '0', 'is out of range 1-31')],
    ['* * 32 * *', 'day-of-month', field('day-of-month', '32', 'is out of range 1-31')],
    ['* * * 13 *', 'month', field('month', '13', 'is out of range 1-12')],
    ['* * * 0 *', 'month', field('month', '0', 'is out of range 1-12')],
    ['* * * * 8', 'day-of-week', field('day-of-week', '8', 'is out of range 0-7')],
    ['1,61 * * * *', 'minute', field('minute', '1,61', 'has "61", which is out of range 0-59')],
    ['* 1-24 * * *', 'hour', field('hour', '1-24', 'has "24", which is out of range 0-23')],
    // not a value of the field
    ['* * * * MON-XYZ', 'day-of-week', field('day-of-week', 'MON-XYZ', 'is not a valid day of week')],
    ['* * * * MON,XYZ', 'day-of-week', field('day-of-week', 'MON,XYZ', 'has "XYZ", which is not a valid day of week')],
    ['* * * * MONDAY', 'day-of-week', field('day-of-week', 'MONDAY', 'is not a valid day of week')],
    ['* * * * JAN', 'day-of-week', field('day-of-week', 'JAN', 'is not a valid day of week')],
    ['* * * MON *', 'month', field('month', 'MON', 'is not a valid month')],
    ['* JUL * * *', 'hour', field('hour', 'JUL', 'is not a valid hour')],
    ['a * * * *', 'minute', field('minute', 'a', 'is not a valid minute')],
    ['-1 * * * *', 'minute', field('minute', '-1', 'is not a valid minute')],
    ['1- * * * *', 'minute', field('minute', '1-', 'is not a valid minute')],
    ['1-2-3 * * * *', 'minute', field('minute', '1-2-3', 'is not a valid minute')],
    ['*-5 * * * *', 'minute', field('minute', '*-5', 'is not a valid minute')],
    ['** * * * *', 'minute', field('minute', '**', 'is not a valid minute')],
    ['1/2/3 * * * *', 'minute', field('minute', '1/2/3', 'is not a valid minute')],
    ['/5 * * * *', 'minute', field('minute', '/5', 'is not a valid minute')],
    ['1.5 * * * *', 'minute', field('minute', '1.5', 'is not a valid minute')],
    ['+1 * * * *', 'minute', field('minute', '+1', 'is not a valid minute')],
    ['١ * * * *', 'minute', field('minute', '١', 'is not a valid minute')], // an Arabic-Indic digit
    // extensions of other crons
    ['0 0 L * *', 'day-of-month', field('day-of-month', 'L', `is not a valid day of month${EXTENSION}`)],
    ['0 0 15W * *', 'day-of-month', field('day-of-month', '15W', `is not a valid day of month${EXTENSION}`)],
    ['0 0 ? * *', 'day-of-month', field('day-of-month', '?', `is not a valid day of month${EXTENSION}`)],
    ['0 0 * * 1#2', 'day-of-week', field('day-of-week', '1#2', `is not a valid day of week${EXTENSION}`)],
    ['0 0 * * 5L', 'day-of-week', field('day-of-week', '5L', `is not a valid day of week${EXTENSION}`)],
    ['H * * * *', 'minute', field('minute', 'H', `is not a valid minute${EXTENSION}`)],
    // steps
    ['*/0 * * * *', 'minute', field('minute', '*/0', 'has a step of 0; a step must be 1 or more')],
    ['* 1-5/0 * * *', 'hour', field('hour', '1-5/0', 'has a step of 0; a step must be 1 or more')],
    ['*/x * * * *', 'minute', field('minute', '*/x', 'has a step "x" that is not a whole number')],
    ['*/-1 * * * *', 'minute', field('minute', '*/-1', 'has a step "-1" that is not a whole number')],
    ['*/ * * * *', 'minute', field('minute', '*/', 'has a "/" with no step after it')],
    ['*/90 * * * *', 'minute', field('minute', '*/90', 'has a step of 90, wider than the range 0-59 it steps through')],
    ['* 20/5 * * *', 'hour', field('hour', '20/5', 'has a step of 5, wider than the range 20-23 it steps through')],
    // reversed ranges
    ['5-1 * * * *', 'minute', field('minute', '5-1', 'is a range whose start (5) is after its end (1)')],
    ['0,5-1 * * * *', 'minute', field('minute', '0,5-1', 'has "5-1", which is a range whose start (5) is after its end (1)')],
    ['* * * DEC-JAN *', 'month', field('month', 'DEC-JAN', 'is a range whose start (DEC) is after its end (JAN)')],
    [
      '* * * * SAT-SUN',
      'day-of-week',
      field('day-of-week', 'SAT-SUN', 'is a range whose start (SAT) is after its end (SUN); write Sunday as 7 to end a range on it'),
    ],
    // lists
    ['1,,2 * * * *', 'minute', field('minute', '1,,2', 'has an empty list item')],
    ['1, * * * *', 'minute', field('minute', '1,', 'has an empty list item')],
    ['1-5,3 * * * *', 'minute', field('minute', '1-5,3', 'lists 3 more than once')],
    ['*,5 * * * *', 'minute', field('minute', '*,5', 'lists 5 more than once')],
    ['* * * * 0,7', 'day-of-week', field('day-of-week', '0,7', 'lists Sunday more than once (0 and 7 both mean Sunday)')],
    ['* * * * 5-7,SUN', 'day-of-week', field('day-of-week', '5-7,SUN', 'lists Sunday more than once (0 and 7 both mean Sunday)')],
    ['* * * * MON,1', 'day-of-week', field('day-of-week', 'MON,1', 'lists Monday more than once')],
    // a day of month that none of the months has (with day of week `*`)
    ['0 0 30 2 *', 'day-of-month', field('day-of-month', '30', 'never occurs in the month field "2" (that month has at most 29 days)')],
    ['0 0 31 4,6,9,11 *', 'day-of-month', field('day-of-month', '31', 'never occurs in the month field "4,6,9,11" (those months have at most 30 days)')],
  ];
  for (const [expression, fieldName, message] of ERRORS) {
    test(`refuses ${JSON.stringify(expression.length > 40 ? `${expression.slice(0, 40)}...` : expression)}`, () => {
      assert.throws(
        () => validateCron(expression),
        (err: unknown) => {
          assert.ok(err instanceof CronError);
          assert.equal(err.message, message);
          assert.equal(err.field, fieldName);
          return true;
        },
      );
    });
  }

  test('refuses what is not a string without throwing anything else', () => {
    for (const value of [undefined, null, 5, {}, []]) assert.throws(() => validateCron(value as unknown as string), CronError);
  });
});

test('normalizeCron trims and collapses whitespace', () => {
  assert.equal(normalizeCron('  5   0 *\t* *\n'), '5 0 * * *');
  assert.equal(normalizeCron('@daily '), '@daily');
  assert.equal(normalizeCron(''), '');
});

// ---- Agreement with an independent reading of standard cron ----

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const RANGES: [number, number][] = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 7],
];

/** The values one field matches, read as Vixie cron reads it (with `a/n` meaning a-max/n). */
function referenceField(text: string, index: number): Set<number> {
  const [min, max] = RANGES[index];
  const value = (t: string) => {
    if (/^\d+$/.test(t)) return Number(t);
    return index === 3 ? MONTHS.indexOf(t.toUpperCase()) + 1 : DAYS.indexOf(t.toUpperCase());
  };
  const out = new Set<number>();
  for (const item of text.split(',')) {
    const [base, step] = item.split('/');
    const [lo, hi] = base === '*' ? [min, max] : base.includes('-') ? base.split('-').map(value) : [value(base), step ? max : value(base)];
    for (let v = lo; v <= hi; v += step ? Number(step) : 1) out.add(index === 4 ? v % 7 : v);
  }
  return out;
}

/** Fire times strictly after `after`, found by walking the calendar day by day. */
function referenceRuns(expression: string, after: Date, count: number): Date[] {
  const parts = expression.trim().split(/\s+/);
  const [minutes, hours, days, months, weekdays] = parts.map(referenceField);
  // Vixie: when either day field is `*`, both must match (the `*` one always does); otherwise either may.
  const either = parts[2] !== '*' && parts[4] !== '*';
  const byNumber = (a: number, b: number) => a - b;
  const out: Date[] = [];
  const first = Date.UTC(after.getUTCFullYear(), after.getUTCMonth(), after.getUTCDate());
  for (let day = first; out.length < count && day < first + 40 * 366 * 86_400_000; day += 86_400_000) {
    const d = new Date(day);
    if (!months.has(d.getUTCMonth() + 1)) continue;
    const dom = days.has(d.getUTCDate());
    const dow = weekdays.has(d.getUTCDay());
    if (either ? !(dom || dow) : !(dom && dow)) continue;
    for (const h of [...hours].sort(byNumber)) {
      for (const m of [...minutes].sort(byNumber)) {
        const t = day + h * 3_600_000 + m * 60_000;
        if (t > after.getTime() && out.length < count) out.push(new Date(t));
      }
    }
  }
  return out;
}

/** A small seeded generator, so a failure names an expression that can be replayed. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generate(rand: () => number): string {
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
  const fields = RANGES.map(([min, max], index) => {
    // Leaning towards month ends, February and restricted day fields, where the rules differ.
    if (rand() < (index === 2 || index === 4 ? 0.25 : 0.45)) return '*';
    const spell = (v: number) => {
      if (index === 3 && rand() < 0.3) return pick([(s: string) => s, (s: string) => s.toLowerCase()])(MONTHS[v - 1]);
      if (index === 4 && v < 7 && rand() < 0.3) return pick([(s: string) => s, (s: string) => s.toLowerCase()])(DAYS[v]);
      return String(v);
    };
    const value = () => (index === 2 && rand() < 0.4 ? int(27, 31) : index === 3 && rand() < 0.3 ? 2 : int(min, max));
    // Steps mostly fit their range; the ones that do not, and lists that repeat a value, are refused.
    const step = (width: number) => int(1, Math.max(1, width));
    const item = () => {
      const a = value();
      const b = int(a, max);
      return pick([
        () => spell(a),
        () => `${spell(a)}-${spell(b)}`,
        () => `${spell(a)}-${spell(b)}/${step(b - a)}`,
        () => `${spell(a)}/${step(max - a)}`,
        () => `*/${step((max - min) / 2)}`,
      ])();
    };
    return Array.from({ length: pick([1, 1, 1, 1, 1, 2, 3]) }, item).join(',');
  });
  return fields.join(' ');
}

function checkAgainstReference(expression: string, after: Date) {
  const runs = nextRuns(expression, after, 8);
  assert.deepEqual(iso(runs), iso(referenceRuns(expression, after, 8)), `${expression} after ${after.toISOString()}`);
  assert.equal(latestRun(expression, runs[0])?.getTime(), runs[0].getTime(), expression);
  assert.equal(latestRun(expression, new Date(runs[1].getTime() - 1))?.getTime(), runs[0].getTime(), expression);
  const description = describeCron(expression);
  assert.match(description, /^\S.* \(UTC\)$/, expression);
  assert.doesNotMatch(description, /undefined|NaN|null|At times matching/, expression);
}

describe('what validateCron accepts, cron-parser reads the same way', () => {
  const SAMPLE = [
    '0 0 */2 * 1', // cron-parser treats only a bare `*` as "every day": odd days OR Mondays
    '0 0 1-31 * 1',
    '0 0 * * 0-7',
    '0 0 * * 7-7',
    '0 0 * * */7',
    '0 0 1-7 * MON',
    '0 0 13 * 5',
    '0 0 31 2,3 *',
    '0 0 28-31 2 *',
    '0 0 30 2 1',
    '*/45 * * * *',
    '7 */5 */3 */4 *',
    '0,30 8-18/2 * * mon-FRI',
    '0 0 1 jan/5 *',
    '059 007 * * 07',
  ];
  for (const expression of SAMPLE) {
    test(expression, () => checkAgainstReference(expression, at('2026-01-17T08:30:00Z')));
  }

  test('a generated sample of 400 expressions', () => {
    const rand = random(7);
    let accepted = 0;
    for (let i = 0; i < 400; i++) {
      const expression = generate(rand);
      try {
        validateCron(expression);
      } catch (err) {
        assert.ok(err instanceof CronError && err.field !== null, `${expression}: ${err}`);
        continue;
      }
      accepted++;
      checkAgainstReference(expression, new Date(Date.UTC(2024, 0, 1) + Math.floor(rand() * 6 * 365) * 86_400_000 + Math.floor(rand() * 1440) * 60_000));
    }
    assert.ok(accepted >= 150, `only ${accepted} of 400 generated expressions were accepted`);
  });

  test('random junk is refused with a CronError or read the same way', () => {
    const rand = random(11);
    const alphabet = '0123456789*,-/ *,-/ LWH#?@monJANsunxX';
    for (let i = 0; i < 1000; i++) {
      const expression = Array.from({ length: 1 + Math.floor(rand() * 24) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
      try {
        validateCron(expression);
      } catch (err) {
        assert.ok(err instanceof CronError, `${JSON.stringify(expression)}: ${err}`);
        assert.ok(err.message.startsWith('CronExpression'));
        continue;
      }
      checkAgainstReference(expression, at('2026-01-17T08:30:00Z'));
    }
  });
});
