// Demo data: user-defined fields and their values.
import type { DemoContext } from './context.ts';
import { ds, mkDay } from './dates.ts';
import type { Agency } from './model.ts';

export function addUserFields(ctx: DemoContext, a: Pick<Agency, 'companies' | 'users' | 'ceo' | 'realClients' | 'projects' | 'jobs'>): void {
  const { rngFor, add, audit, T } = ctx;
  const { companies, users, ceo, realClients, projects, jobs } = a;
  const rUdf = rngFor('user-fields');
  const field = (dt: string, column: string, label: string, type: string, order: number): string => {
    const id = rUdf.uuid();
    add('user_fields', { id, document_type_id: dt, column_name: column, label, data_type: type, sort_order: order, ...audit(mkDay(2024, 1, 10), 600, ceo.id) });
    return id;
  };
  const fBadge = field(T.user, 'BadgeNumber', 'Badge number', 'Text', 0);
  const fSeniority = field(T.user, 'SeniorityYears', 'Seniority (years)', 'Number', 1);
  const fRemote = field(T.user, 'RemoteWorker', 'Remote worker', 'Boolean', 2);
  const fPoRef = field(T.project, 'ClientPoReference', 'Client PO reference', 'Text', 0);
  const fBudget = field(T.project, 'InternalBudget', 'Internal budget', 'Number', 1);
  const fKickoff = field(T.project, 'KickoffDate', 'Kick-off date', 'Date', 2);
  const fVatReg = field(T.company, 'VatRegistration', 'VAT registration', 'Text', 0);
  const fFounded = field(T.company, 'FoundedOn', 'Founded on', 'Date', 1);
  const fSegment = field(T.client, 'Segment', 'Segment', 'Text', 0);
  const fChannel = field(T.job, 'Channel', 'Channel', 'Text', 0);
  const value = (fieldId: string, documentId: string, v: unknown, day: number): void =>
    add('user_field_values', { id: rUdf.uuid(), user_field_id: fieldId, document_id: documentId, value: JSON.stringify(v), ...audit(day, 600, ceo.id) }); // jsonb scalar: must be JSON text, not a bare string
  users.forEach((u, i) => {
    value(fBadge, u.id, `B-${String(1000 + i)}`, mkDay(2025, 1, 15));
    value(fSeniority, u.id, rUdf.int(0, 15), mkDay(2025, 1, 15));
    if (rUdf.chance(0.7)) value(fRemote, u.id, rUdf.chance(0.3), mkDay(2025, 1, 15));
  });
  for (const p of projects) {
    if (rUdf.chance(0.6)) value(fPoRef, p.id, `PO-${rUdf.int(10000, 99999)}`, p.start);
    value(fBudget, p.id, rUdf.int(5, 200) * 1000, p.start);
    value(fKickoff, p.id, ds(p.start), p.start);
  }
  for (const c of companies) {
    value(fVatReg, c.id, `${c.countryIso}${rUdf.int(100000000, 999999999)}`, mkDay(2024, 1, 5));
    value(fFounded, c.id, ds(mkDay(rUdf.int(1990, 2015), rUdf.int(1, 12), 1)), mkDay(2024, 1, 5));
  }
  for (const cl of realClients) value(fSegment, cl.id, rUdf.pick(['Enterprise', 'Mid-market', 'SMB']), mkDay(2024, 6, 1));
  for (const j of jobs) if (!j.internal && rUdf.chance(0.5)) value(fChannel, j.id, rUdf.pick(['Digital', 'Print', 'TV', 'Social', 'OOH']), j.start);
}
