// Who approved a leave: DE-Leaves shows only the approvers' names (`Approvers`: the display names of the
// leave's Approved approvals of role Approver, sorted, joined with ", "). The import gives the approval
// rows back by resolving each name to a user of the target (users come first, with the source's names).
import { sql } from 'kysely';
import type { Trx } from '../../platform/db/database.ts';
import type { SourceRow } from '../client.ts';
import type { RunState, TableWrite, Values } from '../mappings.ts';
import { derivedId, id } from './helpers.ts';

export interface TargetUser {
  id: string;
  /** The display name every query shows: name, else login (fragments.ts, userName). */
  name: string;
  active: boolean;
  companyId: string | null;
}

/** Bounds what one Approvers text may grow to: names resolved per leave. */
const MAX_NAMES = 200;
/** Bounds the split's work: a name holds at most this many ", "-separated parts. */
const MAX_PARTS_PER_NAME = 8;
/** Unresolved names listed one by one in the report (the rest are counted). */
const MAX_LISTED = 20;

/**
 * Splits an Approvers text into the names it joins. A name may itself hold ", ": the text is split into
 * known names where it can be (fewest tokens per name first, deterministically); else each part is a name.
 */
export function approverNames(text: string, known: (name: string) => boolean): string[] {
  const parts = text.split(', ').slice(0, MAX_NAMES);
  const n = parts.length;
  // ends[i]: the parts from i on split wholly into known names.
  const ends = new Array<boolean>(n + 1).fill(false);
  ends[n] = true;
  for (let i = n - 1; i >= 0; i--) {
    for (let j = i + 1; j <= Math.min(n, i + MAX_PARTS_PER_NAME) && !ends[i]; j++) ends[i] = ends[j] && known(parts.slice(i, j).join(', '));
  }
  if (!ends[0]) return parts;
  const names: string[] = [];
  for (let i = 0; i < n; ) {
    let j = i + 1;
    while (!(ends[j] && known(parts.slice(i, j).join(', ')))) j++;
    names.push(parts.slice(i, j).join(', '));
    i = j;
  }
  return names;
}

/**
 * The users a leave's approver names stand for. Several users may share a name (the column reads the same
 * whichever is chosen); the choice is deterministic: a user already recorded as an approver of this leave,
 * then an active one, then one of the leave's company, then the smallest id; a name shown twice takes two
 * users where there are two. Names no user has are returned apart.
 */
export function resolveApprovers(
  names: string[],
  byName: Map<string, TargetUser[]>,
  current: Set<string>,
  companyId: string | null,
): { userIds: string[]; unresolved: string[] } {
  const userIds: string[] = [];
  const unresolved: string[] = [];
  const taken = new Map<string, number>();
  for (const name of names) {
    const candidates = byName.get(name);
    if (!candidates?.length) {
      unresolved.push(name);
      continue;
    }
    const rank = (u: TargetUser) => [taken.get(u.id) ?? 0, current.has(u.id) ? 0 : 1, u.active ? 0 : 1, u.companyId === companyId ? 0 : 1];
    let best = candidates[0];
    for (const u of candidates.slice(1)) {
      const [a, b] = [rank(u), rank(best)];
      const cmp = a.findIndex((v, k) => v !== b[k]);
      if ((cmp >= 0 && a[cmp] < b[cmp]) || (cmp < 0 && u.id < best.id)) best = u;
    }
    taken.set(best.id, (taken.get(best.id) ?? 0) + 1);
    userIds.push(best.id);
  }
  return { userIds, unresolved };
}

/** What the import knows of the target before DE-Leaves is read (per run). */
interface Known {
  byName: Map<string, TargetUser[]>;
  /** Each leave's approval rows (Approved, role Approver): id and approver. */
  approvals: Map<string, { id: string; approverId: string }[]>;
  unresolved: number;
}
const knownOf = new WeakMap<RunState, Known>();
/** The approvals a row gives (computed by the first write, read by the second). */
const approvalsOfRow = new WeakMap<SourceRow, Values[]>();

/**
 * Loads the target's users by display name and its leaves' approvals; removes approvals of leaves the
 * target no longer holds (a leave the source deleted).
 */
export async function loadLeaveApprovers(trx: Trx, tenantId: string, state: RunState): Promise<void> {
  const leaveType = state.documentTypes.byClass.get('Leave');
  await sql`
    delete from approvals a
     where a.tenant_id = ${tenantId} and a.document_type_id = ${leaveType ?? null} and a.role = 'Approver' and a.status = 'Approved'
       and not exists (select 1 from leaves l where l.tenant_id = a.tenant_id and l.id = a.document_id)`.execute(trx);
  const users = await sql<{ id: string; name: string; is_active: boolean; company_id: string | null }>`
    select id, coalesce(name, user_name) as name, is_active, company_id from users where tenant_id = ${tenantId} order by id`.execute(trx);
  const byName = new Map<string, TargetUser[]>();
  for (const u of users.rows) {
    const list = byName.get(u.name) ?? [];
    list.push({ id: u.id, name: u.name, active: u.is_active, companyId: u.company_id });
    byName.set(u.name, list);
  }
  const approvals = new Map<string, { id: string; approverId: string }[]>();
  if (leaveType) {
    const rows = await sql<{ id: string; document_id: string; approver_id: string }>`
      select id, document_id, approver_id from approvals
       where tenant_id = ${tenantId} and document_type_id = ${leaveType} and role = 'Approver' and status = 'Approved'`.execute(trx);
    for (const a of rows.rows) {
      const list = approvals.get(a.document_id) ?? [];
      list.push({ id: a.id, approverId: a.approver_id });
      approvals.set(a.document_id, list);
    }
  }
  knownOf.set(state, { byName, approvals, unresolved: 0 });
}

function approvalsOf(r: SourceRow, s: RunState): Values[] {
  const known = knownOf.get(s);
  const leaveType = s.documentTypes.byClass.get('Leave');
  const leaveId = id(r.LeaveId);
  if (!known || !leaveType || !leaveId) return [];
  const current = known.approvals.get(leaveId) ?? [];
  const text = typeof r.Approvers === 'string' ? r.Approvers : '';
  const names = text ? approverNames(text, (n) => known.byName.has(n)) : [];
  const { userIds, unresolved } = resolveApprovers(names, known.byName, new Set(current.map((a) => a.approverId)), id(r.CompanyId));
  for (const name of unresolved) {
    known.unresolved++;
    if (known.unresolved <= MAX_LISTED) {
      s.leftOut.push(`DE-Leaves: approver ${JSON.stringify(name)} of leave ${leaveId} is no user's name on the target; that approval is not written`);
    } else if (known.unresolved === MAX_LISTED + 1) {
      s.leftOut.push(`DE-Leaves: more approver names matched no user (only the first ${MAX_LISTED} are listed)`);
    }
  }
  const seen = new Map<string, number>();
  return userIds.map((approverId) => {
    const nth = seen.get(approverId) ?? 0;
    seen.set(approverId, nth + 1);
    return {
      id: derivedId('approvals', leaveId, approverId, nth),
      document_type_id: leaveType,
      document_id: leaveId,
      approver_id: approverId,
      role: 'Approver',
      status: 'Approved',
    };
  });
}

/**
 * DE-Leaves' approvals: the target's approvals of the leave that the row no longer shows go, then the
 * row's are written (a re-run writes nothing: same ids, same values). Only leaves a run reads are touched.
 */
export const leaveApprovals: TableWrite[] = [
  {
    table: 'approvals',
    mode: 'delete',
    values: (r, s) => {
      const wanted = approvalsOf(r, s);
      approvalsOfRow.set(r, wanted);
      const keep = new Set(wanted.map((a) => a.id));
      return (knownOf.get(s)?.approvals.get(String(r.LeaveId)) ?? []).filter((a) => !keep.has(a.id)).map((a) => ({ id: a.id }));
    },
  },
  { table: 'approvals', values: (r) => approvalsOfRow.get(r) ?? [] },
];
