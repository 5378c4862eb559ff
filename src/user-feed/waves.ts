// The order a file's rows may run in when batches run on several connections at once. A row that names a
// manager who is another row of the file runs in a later wave than that row (so the manager exists,
// wherever it is in the file); rows of one wave do not depend on each other. Rows that must keep the
// file's order among themselves (an externalId given twice, a manager given twice, a cycle of managers)
// run last, one after another. Deactivations run first: they free the logins a new user may take.
import type { ReadRow } from './records.ts';
import { deactivates } from './rows.ts';

export interface Waves {
  /** Independent rows, wave by wave: every row of wave n+1 names a manager of a wave up to n. */
  concurrent: ReadRow[][];
  /** Rows in the file's order, run one after another after the waves. */
  sequential: ReadRow[];
}

const id = (v: string | undefined) => (v ?? '').trim();

export function waves(rows: ReadRow[]): Waves {
  const count = new Map<string, number>();
  for (const r of rows) if (!r.error && id(r.record.externalId)) count.set(id(r.record.externalId), (count.get(id(r.record.externalId)) ?? 0) + 1);
  const byId = new Map<string, ReadRow>();
  for (const r of rows) if (!r.error && count.get(id(r.record.externalId)) === 1) byId.set(id(r.record.externalId), r);
  const level = new Map<ReadRow, number>();
  const visiting = new Set<ReadRow>();
  // -1: the row keeps the file's order (runs in the sequential tail).
  const levelOf = (r: ReadRow): number => {
    const known = level.get(r);
    if (known !== undefined) return known;
    let l = 0;
    const ext = id(r.record.externalId);
    const off = !r.error && deactivates(r.record);
    // A deactivation ignores its manager: wave 0; every other row from wave 1.
    const manager = r.error || off ? '' : id(r.record.responsible);
    if (ext && (count.get(ext) ?? 0) > 1) l = -1;
    else if (manager && count.has(manager)) {
      const m = byId.get(manager);
      if (!m || visiting.has(m) || m === r) l = -1;
      else {
        visiting.add(r);
        const ml = levelOf(m);
        visiting.delete(r);
        l = ml < 0 ? -1 : Math.max(ml, 0) + 1;
      }
    }
    if (l === 0 && !off) l = 1;
    level.set(r, l);
    return l;
  };
  const concurrent: ReadRow[][] = [];
  const sequential: ReadRow[] = [];
  for (const r of rows) {
    const l = levelOf(r);
    if (l < 0) sequential.push(r);
    else {
      concurrent[l] ??= [];
      concurrent[l].push(r);
    }
  }
  return { concurrent: concurrent.filter(Boolean), sequential };
}
