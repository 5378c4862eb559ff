// Demo data: dates as whole days since 1970-01-01 (UTC). The demo agency lives in a fixed year so runs are reproducible.

const DAY_MS = 86_400_000;
export const mkDay = (y: number, m: number, d: number): number => Date.UTC(y, m - 1, d) / DAY_MS;
export const YEAR_START = mkDay(2025, 1, 1);
export const YEAR_END = mkDay(2025, 12, 31);
export const NOW = mkDay(2026, 1, 15);
export const ATTENDANCE_FROM = mkDay(2025, 11, 1);

const dateCache = new Map<number, string>();
export function ds(d: number): string {
  let s = dateCache.get(d);
  if (s === undefined) {
    s = new Date(d * DAY_MS).toISOString().slice(0, 10);
    dateCache.set(d, s);
  }
  return s;
}
export const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));
/** timestamptz text for a day plus minutes (may run past midnight). */
export function ts(d: number, minute: number): string {
  const dd = d + Math.floor(minute / 1440);
  const m = ((minute % 1440) + 1440) % 1440;
  return `${ds(dd)} ${pad2(Math.floor(m / 60))}:${pad2(m % 60)}:00+00`;
}
export const isWeekend = (d: number): boolean => {
  const w = (d + 4) % 7; // 1970-01-01 was a Thursday
  return w === 0 || w === 6;
};
export function monthStart(d: number): number {
  const dt = new Date(d * DAY_MS);
  return Date.UTC(dt.getUTCFullYear(), dt.getUTCMonth(), 1) / DAY_MS;
}
export function addMonths(monthDay: number, n: number): number {
  const dt = new Date(monthDay * DAY_MS);
  return Date.UTC(dt.getUTCFullYear(), dt.getUTCMonth() + n, 1) / DAY_MS;
}
export const round2 = (x: number): number => Math.round(x * 100) / 100;
