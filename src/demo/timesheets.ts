// Demo data: timesheets, streamed to COPY in day-major order as they are generated (a million rows at
// scale 50 would not fit as objects), with the attendances and workloads that derive from them.
import type { DemoContext } from './context.ts';
import { ATTENDANCE_FROM, ds, isWeekend, mkDay, NOW, pad2, ts, YEAR_END, YEAR_START } from './dates.ts';
import type { Agency } from './model.ts';
import { SeqIds } from './random.ts';

export interface Timesheets {
  /** COPY text of every timesheet row; attendances and workloads are added to the sink on the way. */
  chunks: () => Generator<string>;
  count: () => number;
  /** Share of the year generated so far (0 to 1): the rows come day by day, their total is only known at the end. */
  progress: () => number;
  /** Planned (future) workloads, added once the timesheets they follow are loaded. */
  addFutureWorkloads: () => void;
}

export function prepareTimesheets(ctx: DemoContext, a: Pick<Agency, 'users' | 'leaveMinutes' | 'workingDays'>): Timesheets {
  const { tenantId, rngFor, add, audit, T } = ctx;
  const { users, leaveMinutes, workingDays } = a;
  const rTs = rngFor('timesheets');
  const tsIds = new SeqIds(rTs);
  const attIds = new SeqIds(rTs);
  const wlIds = new SeqIds(rTs);
  const tenantPrefix = `${tenantId}\t`;
  let timesheetCount = 0;
  // Day-major order (as people enter time): the date and modified-date indexes then grow at their right edge.
  // What is stored when time is booked: the user's department and typology, the cost in force that day
  // and the company of the job the time is booked in (another company of the group for some jobs). One user
  // in seven had their second-half cost raised retroactively after booking: their entries keep the cost
  // they were booked at, 2.50 below what user_costs now says (a cost changed after booking). One user in nine
  // books their time in the sister company (time booked in another company than their own).
  const companyIds = [...new Set(users.map((u) => u.company.id))];
  const tsUsers = users.map((u, i) => ({
    u,
    leaves: leaveMinutes.get(u.id)!,
    pool: u.pool.filter((j) => !j.internal),
    internal: u.company.internalJobs,
    bookedH2: i % 7 === 3 ? Math.max(1, Math.round((u.hourly2025H2 - 2.5) * 100) / 100) : u.hourly2025H2,
    bookedIn: i % 9 === 1 ? (companyIds.find((c) => c !== u.company.id) ?? null) : null,
  }));
  const H2 = mkDay(2025, 7, 1);
  let dayReached = YEAR_START;
  function* timesheetChunks(): Generator<string> {
    let buf = '';
    for (let d = YEAR_START; d <= YEAR_END; d++) {
      dayReached = d;
      if (isWeekend(d)) continue;
      for (const { u, leaves, pool, internal, bookedH2, bookedIn } of tsUsers) {
        if (d < u.firstDay || d > u.lastDay || u.company.holidays.has(d)) continue;
        const leave = leaves.get(d) ?? 0;
        if (leave >= u.requiredMinutes) continue;
        let minutes = u.requiredMinutes - leave;
        const v = rTs.next();
        if (v < 0.2) minutes += rTs.int(1, 6) * 15;
        else if (v < 0.3) minutes -= rTs.int(1, 4) * 15;
        const active = pool.filter((j) => j.start <= d && d <= j.end);
        const entries = Math.min(rTs.int(3, 6), Math.max(1, Math.floor(minutes / 30)));
        const units = Math.floor(minutes / 15);
        const split = new Array<number>(entries).fill(1);
        for (let k = entries; k < units; k++) split[Math.floor(rTs.next() * entries)]++;
        let total = 0;
        const dayStr = ds(d);
        for (let e = 0; e < entries; e++) {
          const job =
            active.length > 0 && rTs.next() < 0.9 ? active[Math.floor(rTs.next() * active.length)] : internal[Math.floor(rTs.next() * internal.length)];
          const mins = split[e] * 15;
          total += mins;
          let status: string;
          const r = rTs.next();
          if (d < mkDay(2025, 12, 1)) status = r < 0.97 ? 'Approved' : r < 0.98 ? 'Rejected' : r < 0.99 ? 'Canceled' : 'New';
          else if (d < mkDay(2025, 12, 20)) status = r < 0.3 ? 'Approved' : 'New';
          else status = r < 0.6 ? 'Draft' : 'New';
          const id = tsIds.next();
          const createdMinute = 1020 + Math.floor(rTs.next() * 120);
          const created = `${dayStr} ${pad2(Math.floor(createdMinute / 60))}:${pad2(createdMinute % 60)}:00+00`;
          const deleted = rTs.next() < 0.005;
          let modified = created;
          let modifiedBy = u.id;
          if (status === 'Approved' || status === 'Rejected') {
            modified = ts(d + 2 + Math.floor(rTs.next() * 5), 600);
            modifiedBy = u.responsibleId ?? u.id;
          }
          let deletedOn = '\\N';
          if (deleted) {
            deletedOn = ts(d + 1 + Math.floor(rTs.next() * 10), 700);
            modified = deletedOn;
            modifiedBy = u.id;
          }
          buf += `${tenantPrefix}${id}\t${u.id}\t${job.id}\t${job.workTypeId}\t${dayStr}\t${mins}\t${job.billable ? 't' : 'f'}\t${status}\t${status === 'Draft' ? 'f' : 't'}\t${deletedOn}\t${created}\t${u.id}\t${modified}\t${modifiedBy}\t${bookedIn ?? job.project.company.id}\t${u.dept.id}\t${u.typology.id}\t${d < H2 ? u.hourly2025H1 : bookedH2}\n`;
          timesheetCount++;
          if (!deleted && rTs.next() < 0.1) {
            add('workloads', {
              id: wlIds.next(),
              document_type_id: T.job,
              document_id: job.id,
              user_id: u.id,
              timesheet_id: id,
              day: dayStr,
              workload_minutes: Math.max(0, mins + (Math.floor(rTs.next() * 5) - 2) * 15),
              ...audit(d - 7, 600, job.project.managerId),
            });
          }
        }
        if (d >= ATTENDANCE_FROM) {
          const attId = attIds.next();
          const entry = 530 + Math.floor(rTs.next() * 30);
          const breakMinutes = total > 300 ? 60 : 0;
          const exit = entry + total + breakMinutes;
          const homeOffice = rTs.next() < 0.2;
          add('attendances', {
            id: attId,
            user_id: u.id,
            day: dayStr,
            worked_minutes: total,
            offset_total_minutes: total - (u.requiredMinutes - leave),
            tardiness_total_minutes: Math.max(0, entry - 540 - 10),
            break_total_minutes: breakMinutes,
            home_office: homeOffice,
            half_day: leave > 0 && leave < u.requiredMinutes,
            ...audit(d, exit, u.id),
          });
          const adjusted = rTs.next() < 0.05;
          const punches: Array<[number, number]> =
            breakMinutes > 0
              ? [
                  [0, entry],
                  [2, 780],
                  [3, 840],
                  [1, exit],
                ]
              : [
                  [0, entry],
                  [1, exit],
                ];
          for (const [type, minute] of punches) {
            const offset = type === 1 ? total - (u.requiredMinutes - leave) : 0;
            add('attendance_details', {
              id: attIds.next(),
              attendance_id: attId,
              time: ts(d, minute + (adjusted && type === 0 ? 20 : 0)),
              entry_type: type,
              adjusted_time: adjusted && type === 0 ? ts(d, minute) : null,
              motive: adjusted && type === 0 ? 'Forgot to clock in' : null,
              is_offset: offset !== 0,
              offset_minutes: offset,
              ...audit(d, minute, u.id),
            });
          }
        }
        if (buf.length > 262_144) {
          yield buf;
          buf = '';
        }
      }
    }
    if (buf) yield buf;
  }
  // Planned (future) workloads for open jobs: time booked for January 2026, not yet consumed.
  const addFutureWorkloads = (): void => {
    for (const u of users) {
      if (!u.active) continue;
      const open = u.pool.filter((j) => !j.internal && (j.stage === 'In Progress' || j.stage === 'Draft'));
      for (const job of rTs.sample(open, 2)) {
        for (const d of workingDays(mkDay(2026, 1, 5), 3, u, mkDay(2026, 1, 31)))
          add('workloads', {
            id: wlIds.next(),
            document_type_id: T.job,
            document_id: job.id,
            user_id: u.id,
            timesheet_id: null,
            day: ds(d),
            workload_minutes: rTs.int(2, 8) * 30,
            ...audit(NOW - 5, 600, job.project.managerId),
          });
      }
    }
  };
  const progress = () => (dayReached - YEAR_START) / (YEAR_END - YEAR_START + 1);
  return { chunks: timesheetChunks, count: () => timesheetCount, progress, addFutureWorkloads };
}
