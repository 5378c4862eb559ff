// A schedule's CronExpression: standard five-field cron read in UTC, validated field by field (so a 400 can say which
// field is wrong), with its fire times and a description in plain words.
//
// Fire times come from cron-parser 5.10.5, the library and version pg-boss evaluates schedules with, called the way
// pg-boss calls it (tz UTC, strict: false), so the times a schedule shows are the times it fires. cron-parser accepts
// much more than standard cron (a seconds field, L, W, #, ?, H, its own macros) and its messages do not name the
// field, so validateCron comes first and admits only standard cron, all of which cron-parser reads the same way
// (cron.test.ts compares a generated sample with an independent matcher). Decisions:
// - Day of month and day of week: when neither is written as `*`, a day matches if EITHER matches (Vixie cron;
//   cron-parser does this by default). Unlike Vixie, `*/2` counts as restricted: cron-parser treats only a bare `*`
//   as "every day", and we show what pg-boss fires.
// - Macros @yearly, @annually, @monthly, @weekly, @daily, @hourly are accepted (lowercase, as Vixie spells them):
//   cron-parser, hence pg-boss, expands them to the usual five fields. @reboot, @midnight and cron-parser's own
//   @minutely, @secondly, @weekdays, @weekends are refused.
// - Names JAN-DEC and SUN-SAT in any case, also in ranges and lists; day of week 7 is Sunday like 0.
// - Refused although some crons allow them: a value listed twice, including Sunday as both 0 and 7 (cron-parser
//   refuses duplicates), and a step that does not fit its range twice (`*/90` in minutes fires only at :00, while
//   the description would read "every 90 minutes").
import { CronExpressionParser } from 'cron-parser';
import cronstrue from 'cronstrue';

export type CronField = 'minute' | 'hour' | 'day-of-month' | 'month' | 'day-of-week';

/** An expression that is not standard cron; the message is the whole sentence for the user. */
export class CronError extends Error {
  field: CronField | null;
  constructor(message: string, field: CronField | null) {
    super(message);
    this.name = 'CronError';
    this.field = field;
  }
}

interface FieldSpec {
  name: CronField;
  /** What one value of the field is, in words ("is not a valid day of week"). */
  noun: string;
  min: number;
  max: number;
  /** Three-letter names standing for min, min + 1, ... (empty when the field has none). */
  names: readonly string[];
}

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', noun: 'minute', min: 0, max: 59, names: [] },
  { name: 'hour', noun: 'hour', min: 0, max: 23, names: [] },
  { name: 'day-of-month', noun: 'day of month', min: 1, max: 31, names: [] },
  { name: 'month', noun: 'month', min: 1, max: 12, names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] },
  // 0-7 as in Vixie cron and cron-parser: `*` and `a/n` run up to 7, which is Sunday again.
  { name: 'day-of-week', noun: 'day of week', min: 0, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
];

const FIELD_LIST = 'minute hour day-of-month month day-of-week';
const MACROS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@hourly'];
const DAY_WORDS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
// Longest length of each month, February counting its leap day (what cron-parser checks a day of month against).
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
// cron-parser refuses longer input; only leading zeros could get a valid expression there.
const MAX_LENGTH = 1024;

/** One comma-separated item: `*`, `a`, `a-b`, each optionally `/step` (`a/step` runs to the field's maximum). */
interface Item {
  star: boolean;
  start: number;
  end: number;
  step: number | null;
  /** Whether the end was written (`a-b`) rather than implied. */
  ranged: boolean;
}

interface Field {
  spec: FieldSpec;
  raw: string;
  items: Item[];
  /** The values it matches; day of week folds 7 into 0. */
  values: Set<number>;
}

type Parsed = { macro: string } | { fields: Field[] };

/** Trims and collapses whitespace: the form that is stored and handed to pg-boss. */
export function normalizeCron(expression: string): string {
  return String(expression).trim().split(/\s+/).join(' ');
}

/** Throws a CronError naming the field at fault unless the expression is standard cron. */
export function validateCron(expression: string): void {
  parse(expression);
}

/** The next `count` fire times strictly after `after`, in UTC. */
export function nextRuns(expression: string, after: Date, count = 5): Date[] {
  if (!Number.isInteger(count) || count < 1 || count > 1000) throw new RangeError(`count must be an integer from 1 to 1000, got ${count}`);
  const interval = interpret(expression, after);
  return interval.take(count).map((date) => date.toDate());
}

/** The most recent fire time at or before `atOrBefore`, or null when there is none in the 400 days before it. */
export function latestRun(expression: string, atOrBefore: Date): Date | null {
  // prev() answers strictly before its reference, so the reference is a millisecond later (as pg-boss does).
  const interval = interpret(expression, new Date(atOrBefore.getTime() + 1));
  const previous = interval.prev().toDate();
  return atOrBefore.getTime() - previous.getTime() <= 400 * 86_400_000 ? previous : null;
}

/** The expression in plain words, e.g. "At 00:05, every day (UTC)". */
export function describeCron(expression: string): string {
  const parsed = parse(expression);
  const text = 'macro' in parsed ? parsed.macro : parsed.fields.map(describable).join(' ');
  try {
    const words = cronstrue.toString(text, { use24HourTimeFormat: true, verbose: true });
    return `${words.charAt(0).toUpperCase()}${words.slice(1)} (UTC)`;
  } catch {
    // Not reached for anything validateCron admits (the tests describe a generated sample); a schedule must
    // still render if cronstrue ever stumbles.
    return `At times matching "${normalizeCron(expression)}" (UTC)`;
  }
}

function interpret(expression: string, currentDate: Date) {
  if (Number.isNaN(currentDate.getTime())) throw new RangeError('the reference date is not a valid date');
  parse(expression);
  return CronExpressionParser.parse(normalizeCron(expression), { tz: 'UTC', strict: false, currentDate });
}

function parse(expression: string): Parsed {
  const text = normalizeCron(expression ?? '');
  if (text === '') throw new CronError(`CronExpression is empty; it needs five fields (${FIELD_LIST})`, null);
  if (text.length > MAX_LENGTH) throw new CronError(`CronExpression is too long: ${text.length} characters, at most ${MAX_LENGTH}`, null);
  const parts = text.split(' ');
  if (parts.length === 1 && text.startsWith('@')) {
    if (MACROS.includes(text)) return { macro: text };
    throw new CronError(`CronExpression "${text}" is not supported; use five fields (${FIELD_LIST}) or one of ${MACROS.join(', ')}`, null);
  }
  if (parts.length !== 5) throw new CronError(`CronExpression must have five fields (${FIELD_LIST}); got ${parts.length}`, null);
  const fields = parts.map((raw, i) => parseField(FIELDS[i], raw));
  checkDayOfMonthOccurs(fields[2], fields[3], fields[4]);
  return { fields };
}

function parseField(spec: FieldSpec, raw: string): Field {
  const fail = (detail: string): never => {
    throw new CronError(`CronExpression: the ${spec.name} field "${raw}" ${detail}`, spec.name);
  };
  // Says "is ..." when the culprit is the whole field, else points at the part.
  const about = (part: string, what: string) => (part === raw ? `is ${what}` : `has "${part}", which is ${what}`);
  const invalid = (part: string) => about(part, `not a valid ${spec.noun}${extensionHint(part)}`);
  const items: Item[] = [];
  const values = new Set<number>();
  for (const part of raw.split(',')) {
    if (part === '') fail('has an empty list item');
    const slash = part.split('/');
    if (slash.length > 2) fail(invalid(part));
    const [base, stepText] = slash;
    let item: Item;
    if (base === '*') {
      item = { star: true, start: spec.min, end: spec.max, step: null, ranged: false };
    } else {
      const bounds = base.split('-');
      if (bounds.length > 2) fail(invalid(part));
      const numbers = bounds.map((bound) => tokenValue(spec, bound));
      if (numbers.some((n) => n === null)) fail(invalid(part));
      bounds.forEach((bound, i) => {
        const n = numbers[i]!;
        if (n < spec.min || n > spec.max) fail(about(bound, `out of range ${spec.min}-${spec.max}`));
      });
      const [start, end] = numbers as number[];
      if (end !== undefined && start > end) {
        const sunday = spec.name === 'day-of-week' && end === 0 ? '; write Sunday as 7 to end a range on it' : '';
        fail(about(part, `a range whose start (${bounds[0]}) is after its end (${bounds[1]})${sunday}`));
      }
      item = { star: false, start, end: end ?? (stepText === undefined ? start : spec.max), step: null, ranged: end !== undefined };
    }
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText)) fail(stepText === '' ? `has a "/" with no step after it` : `has a step "${stepText}" that is not a whole number`);
      const step = Number(stepText);
      if (step === 0) fail('has a step of 0; a step must be 1 or more');
      if (item.start + step > item.end) fail(`has a step of ${step}, wider than the range ${item.start}-${item.end} it steps through`);
      item.step = step;
    }
    // cron-parser refuses a value listed twice; 0 and 7 of one day-of-week range (0-7) are fine.
    const own = new Set<number>();
    for (let v = item.start; v <= item.end; v += item.step ?? 1) own.add(spec.name === 'day-of-week' ? v % 7 : v);
    for (const value of own) {
      if (!values.has(value)) continue;
      fail(
        spec.name === 'day-of-week'
          ? `lists ${DAY_WORDS[value]} more than once${value === 0 ? ' (0 and 7 both mean Sunday)' : ''}`
          : `lists ${value} more than once`,
      );
    }
    for (const value of own) values.add(value);
    items.push(item);
  }
  return { spec, raw, items, values };
}

function tokenValue(spec: FieldSpec, text: string): number | null {
  if (/^\d+$/.test(text)) return Number(text);
  const index = /^[a-z]{3}$/i.test(text) ? spec.names.indexOf(text.toUpperCase()) : -1;
  return index === -1 ? null : spec.min + index;
}

/** Names the non-standard extension a part seems to use (month and day names set aside, since JUL holds an L). */
function extensionHint(part: string): string {
  return /[?#LWH]/i.test(part.replace(/[a-z]{3,}/gi, '')) ? ' (L, W, #, ? and H are not standard cron)' : '';
}

// cron-parser refuses a day of month that no listed month has (31 with month 4), unless a restricted day of week
// still gives the expression days (they combine with OR); it compares the smallest listed day with the longest month.
function checkDayOfMonthOccurs(dayOfMonth: Field, month: Field, dayOfWeek: Field): void {
  if (dayOfWeek.raw !== '*') return;
  const longest = Math.max(...[...month.values].map((m) => MONTH_DAYS[m - 1]));
  const smallest = Math.min(...dayOfMonth.values);
  if (smallest > longest) {
    throw new CronError(
      `CronExpression: the day-of-month field "${dayOfMonth.raw}" never occurs in the month field "${month.raw}" (${month.values.size === 1 ? 'that month has' : 'those months have'} at most ${longest} days)`,
      'day-of-month',
    );
  }
}

/**
 * The field as cronstrue should read it: numbers without leading zeros or names, and the day-of-week forms it
 * reads differently from cron (its `a/n` stops at Saturday, `0-7` reads "Sunday through Sunday") spelled out.
 */
function describable(field: Field): string {
  if (field.raw === '*') return '*';
  const dayOfWeek = field.spec.name === 'day-of-week';
  if (dayOfWeek && field.items.some((item) => item.step !== null)) return [...field.values].sort((a, b) => a - b).join(',');
  return field.items
    .map((item) => {
      const base = item.star
        ? '*'
        : item.ranged && item.start !== item.end
          ? `${item.start}-${dayOfWeek && item.start === 0 && item.end === 7 ? 6 : item.end}`
          : `${item.start}`;
      return item.step === null ? base : `${base}/${item.step}`;
    })
    .join(',');
}
