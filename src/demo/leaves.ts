// Demo data: leaves, generated before timesheets because leave days take time out of the timesheet days.
import type { DemoContext } from './context.ts';
import { ds, isWeekend, mkDay, NOW, ts, YEAR_START } from './dates.ts';
import type { Agency, User } from './model.ts';

export function addLeaves(ctx: DemoContext, a: Pick<Agency, 'users'>): Pick<Agency, 'leaveMinutes' | 'leaveApprovals' | 'workingDays'> {
  const { rngFor, add } = ctx;
  const { users } = a;
  const rLeave = rngFor('leaves');
  const leaveMinutes = new Map<string, Map<number, number>>();
  const leaveApprovals: Array<{ id: string; user: User; status: string; day: number; type: 'vac' | 'other' }> = [];
  const workingDays = (from: number, count: number, u: User, until = u.lastDay): number[] => {
    const out: number[] = [];
    for (let d = from; out.length < count && d <= until; d++) if (!isWeekend(d) && !u.company.holidays.has(d)) out.push(d);
    return out;
  };
  for (const u of users) {
    const taken = new Map<number, number>();
    leaveMinutes.set(u.id, taken);
    const addLeave = (day: number, typeId: string, minutes: number, halfDay: boolean, kind: 'vac' | 'other'): void => {
      if (taken.has(day) || day < u.firstDay || day > u.lastDay) return;
      const status =
        day >= mkDay(2025, 12, 1) ? (rLeave.chance(0.6) ? 'New' : 'Approved') : rLeave.chance(0.92) ? 'Approved' : rLeave.chance(0.6) ? 'Rejected' : 'Canceled';
      // A quarter of the open requests are still drafts: leaves not yet requested, which DE-Leaves leaves out.
      const draft = status === 'New' && rLeave.chance(0.25);
      const deleted = rLeave.chance(0.03);
      const created = day - rLeave.int(5, 40);
      const deletedOn = deleted ? ts(created + rLeave.int(1, 4), rLeave.int(540, 1080)) : null;
      const id = rLeave.uuid();
      const modDay = status === 'New' ? created : Math.min(NOW - 1, created + rLeave.int(1, 5));
      add('leaves', {
        id,
        user_id: u.id,
        leave_type_id: typeId,
        day: ds(day),
        is_half_day: halfDay,
        total_minutes: minutes,
        status: draft ? 'Draft' : status,
        requested_approval: !draft,
        remarks: rLeave.chance(0.1) ? 'Family event' : null,
        deleted_on: deletedOn,
        created_on_utc: ts(created, 600),
        created_by_id: u.id,
        modified_on_utc: deletedOn ?? ts(modDay, 660),
        modified_by_id: status === 'New' ? u.id : (u.responsibleId ?? u.id),
      });
      if (deleted) return;
      if (!draft) leaveApprovals.push({ id, user: u, status, day: created, type: kind });
      if (status === 'Approved' || status === 'New') taken.set(day, minutes);
    };
    const blocks = rLeave.int(2, 4);
    for (let b = 0; b < blocks; b++) {
      const start = YEAR_START + rLeave.int(10, 350);
      const len = rLeave.int(2, 7);
      for (const d of workingDays(start, len, u)) {
        const half = len === 2 && rLeave.chance(0.2);
        addLeave(d, d < mkDay(2025, 4, 1) && rLeave.chance(0.5) ? u.company.leaveTypes.vac2024 : u.company.leaveTypes.vac2025, half ? 240 : 480, half, 'vac');
      }
    }
    for (let s = rLeave.int(0, 2); s > 0; s--)
      for (const d of workingDays(YEAR_START + rLeave.int(0, 360), 1, u)) addLeave(d, u.company.leaveTypes.sick, 480, false, 'other');
    for (let s = rLeave.int(0, 2); s > 0; s--)
      for (const d of workingDays(YEAR_START + rLeave.int(0, 360), 1, u)) addLeave(d, u.company.leaveTypes.medical, rLeave.int(1, 3) * 60, false, 'other');
  }
  return { leaveMinutes, leaveApprovals, workingDays };
}
