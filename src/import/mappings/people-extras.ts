// The import's mappings of attendances, workloads and the additional information (user-defined fields) of
// companies and users: the inverse of DE-Attendances, DE-Workloads, DE-CompaniesAdditionalInformation and
// DE-UsersAdditionalInformation (src/extraction/queries/people-and-time/). Decision 0053.
import type { SourceClient, SourceRow } from '../client.ts';
import type { QueryImport, RunState, Values } from '../mappings.ts';
import { day, derivedId } from './helpers.ts';

/** A user-defined field as an *AdditionalInformation query shows it: a column of the catalogue's type. */
interface UserField {
  column: string;
  dataType: 'Text' | 'Number' | 'Date' | 'Boolean' | 'Guid';
  order: number;
}

/** The catalogue's column type of a user field back to the stored data type (fragments.ts, userFieldsOf). */
const DATA_TYPES: Record<string, UserField['dataType']> = { string: 'Text', decimal: 'Number', date: 'Date', boolean: 'Boolean', guid: 'Guid' };

/** Bounds what a source's metadata may grow: fields per document type. */
const MAX_FIELDS = 500;

/** The fields each *AdditionalInformation query shows, read from the source's metadata before its rows (per run). */
const fieldsOfRun = new WeakMap<RunState, Map<string, UserField[]>>();

/**
 * One *AdditionalInformation query: the source's metadata names the fields (every column but the fixed
 * ones, with its type, in the catalogue's order); each row gives the field rows of its document type and
 * one value row per field (null included, so a value cleared on the source is cleared here).
 */
export function additionalInformation(namedQuery: string, className: string, idColumn: string, fixed: string[]): QueryImport {
  const fields = (s: RunState) => fieldsOfRun.get(s)?.get(namedQuery) ?? [];
  const fieldId = (column: string) => derivedId('user_fields', className, column);
  return {
    namedQuery,
    key: [idColumn],
    prepare: async (client: SourceClient, state: RunState) => {
      const meta = await client.metadata(namedQuery);
      const found: UserField[] = [];
      for (const f of meta.fields) {
        if (fixed.includes(f.name)) continue;
        const dataType = DATA_TYPES[f.dataType];
        if (!dataType) continue;
        if (found.length >= MAX_FIELDS) break;
        found.push({ column: f.name, dataType, order: found.length });
      }
      const byQuery = fieldsOfRun.get(state) ?? new Map<string, UserField[]>();
      byQuery.set(namedQuery, found);
      fieldsOfRun.set(state, byQuery);
    },
    writes: [
      {
        // The label no query shows: the column name stands for it (docs/import.md).
        table: 'user_fields',
        insertOnly: ['label'],
        values: (_r, s) => {
          const type = s.documentTypes.byClass.get(className);
          if (!type) return null;
          return fields(s).map((f) => ({
            id: fieldId(f.column),
            document_type_id: type,
            column_name: f.column,
            label: f.column,
            data_type: f.dataType,
            sort_order: f.order,
          }));
        },
      },
      {
        table: 'user_field_values',
        values: (r, s) => {
          if (!s.documentTypes.byClass.has(className) || typeof r[idColumn] !== 'string') return null;
          return fields(s).map((f) => ({
            id: derivedId('user_field_values', fieldId(f.column), r[idColumn]),
            user_field_id: fieldId(f.column),
            document_id: r[idColumn],
            value: fieldValue(f, r[f.column]),
          }));
        },
      },
    ],
  };
}

/** A shown field value back to its stored JSON scalar (a Date field is shown as a datetime, stored as the day). */
function fieldValue(f: UserField, v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (f.dataType === 'Date') return day(v);
  return v;
}

/** DE-Attendances shows one row per clock event; the attendance (a user's day) repeats on each. */
const attendanceId = (r: SourceRow) => derivedId('attendances', r.UserId, day(r.Day));

export const PEOPLE_EXTRAS: QueryImport[] = [
  additionalInformation('DE-CompaniesAdditionalInformation', 'Company', 'CompanyId', ['CompanyId', 'Company', 'ModifiedOnUtc']),
  additionalInformation('DE-UsersAdditionalInformation', 'User', 'UserId', ['UserId', 'User']),
  {
    namedQuery: 'DE-Attendances',
    key: ['UserId', 'Day', 'Time', 'Type'],
    writes: [
      {
        table: 'attendances',
        complete: { scope: 'all' },
        values: (r) => ({
          id: attendanceId(r),
          user_id: r.UserId,
          day: day(r.Day),
          worked_minutes: Number(r.Hours ?? 0) * 60 + Number(r.Minutes ?? 0),
          offset_total_minutes: r.OffSetTotalMinutes,
          tardiness_total_minutes: r.TardinessTotalMinutes,
          break_total_minutes: r.BreakTotalMinutes,
          home_office: r.HomeOffice,
          half_day: r.HalfDay,
        }),
      },
      {
        table: 'attendance_details',
        complete: { scope: 'all' },
        values: (r) => ({
          id: derivedId('attendance_details', r.UserId, day(r.Day), r.Time, r.Type),
          attendance_id: attendanceId(r),
          time: r.Time,
          entry_type: r.Type,
          adjusted_time: r.AdjustedTime,
          motive: r.Motive,
          is_offset: r.Offset,
          offset_minutes: r.OffsetMinutes,
        }),
      },
    ],
  },
  {
    // Workloads planned on jobs (the only ones the query shows): the job's document type is the target's own.
    namedQuery: 'DE-Workloads',
    key: ['WorkloadId'],
    writes: [
      {
        table: 'workloads',
        complete: { scope: 'all' },
        values: (r, s) => {
          const type = s.documentTypes.byClass.get('Deliverable');
          if (!type) return null;
          return {
            id: r.WorkloadId,
            day: day(r.DayUtc),
            workload_minutes: Math.round(Number(r.Workload ?? 0) * 60),
            document_id: r.JobId,
            document_type_id: type,
            // A timesheet the source deleted is a tombstone on both sides (DE-TimeSheetsDeleted comes first).
            timesheet_id: r.TimesheetId,
            user_id: r.UserIs,
          } satisfies Values;
        },
      },
    ],
  },
];
