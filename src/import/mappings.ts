// The inverse of the named queries (src/extraction/queries/): for each query the import reads, which
// rows of which Atrium tables its columns give back, keeping the source's ids. Listed in dependency
// order (organisation and master data, people, clients, documents, time). Ids a query does not expose
// (a link row's own id, a cost row's id) are derived from the row's key, so a re-run finds the same row.
import type { Trx } from '../platform/db/database.ts';
import type { SourceClient, SourceRow } from './client.ts';
import { FINANCE_IMPORTS } from './mappings/finance.ts';
import { day, derivedId, id, jsonText, NIL } from './mappings/helpers.ts';
import { CLIENT, COMPANY, CREATED_BY, imageFlags, MODIFIED, MODIFIED_BY, removeUnusedImagePlaceholders } from './mappings/images.ts';
import { leaveApprovals, loadLeaveApprovers } from './mappings/leave-approvers.ts';
import { PEOPLE_EXTRAS } from './mappings/people-extras.ts';
import { PLANNING_IMPORTS } from './mappings/planning.ts';
import { estimateTypeFromAssignments, loadUntypedEstimates, REQUEST_AND_PURCHASING_IMPORTS } from './mappings/requests-and-purchasing.ts';
import {
  PROJECT_IMPORTS,
  PROJECT_RATE_CARD_IMPORTS,
  stageColours,
  TOMBSTONE_IMPORTS,
  WORKFLOW_IMPORTS,
  WORKFLOW_TEAM_IMPORTS,
} from './mappings/workflows-and-documents.ts';

export { derivedId, NIL } from './mappings/helpers.ts';

/**
 * The tables the import writes, parents before children (their foreign keys): a fresh target's defaults are
 * removed in the reverse order. Every identifier in the import's SQL comes from this list and the mappings.
 */
export const IMPORT_TABLES = [
  'countries',
  'cities',
  'currencies',
  'companies',
  'divisions',
  'departments',
  'holidays',
  'vats',
  'payment_conditions',
  'work_types',
  'service_groups',
  'services',
  'project_classifications',
  'project_natures',
  'business_object_types',
  'briefing_templates',
  'workflows',
  'workflow_stage_types',
  'workflow_stages',
  'workflow_transitions',
  'job_types',
  'user_types',
  'typology_groups',
  'typology_group_companies',
  'typology_group_departments',
  'typologies',
  'employees',
  'users',
  'user_costs',
  'client_groups',
  'commercial_clients',
  'client_companies',
  'commercial_client_users',
  'brands',
  'products',
  'billing_clients',
  'suppliers',
  'expense_types',
  'rate_cards',
  'rate_card_columns',
  'rate_card_items',
  'rate_card_item_values',
  'leave_types',
  'leaves',
  'contracts',
  'projects',
  'jobs',
  'timesheets',
  'expense_sheets',
  'expense_items',
  'estimates',
  'estimate_items',
  'estimate_item_details',
  'estimate_item_detail_months',
  'estimate_billing_conditions',
  'project_planned_times',
  'requests',
  'purchase_orders',
  'purchase_order_items',
  'bills',
  'bill_items',
  'teams',
  'assignments',
  'comments',
  'comment_replies',
  'descriptions',
  'document_history',
  'workflow_stage_write_teams',
  'user_fields',
  'user_field_values',
  'attendances',
  'attendance_details',
  'workloads',
] as const;
export type ImportTable = (typeof IMPORT_TABLES)[number];
/**
 * Tables the import writes but never empties: the document-type catalogue every tenant has, whose rows
 * take the source's ids (src/import/mappings/workflows-and-documents.ts); the placeholder files of images
 * the source holds and their folder (src/import/mappings/images.ts); leaves' approvals
 * (src/import/mappings/leave-approvers.ts). Their other rows are none of the import's.
 */
export type WrittenTable = ImportTable | 'document_types' | 'files' | 'folders' | 'approvals';

export type Values = Record<string, unknown>;

export interface TableWrite {
  table: WrittenTable;
  /** The row's values by column (with `id`), several rows, or null when the source row gives none of this table. */
  values: (row: SourceRow, state: RunState) => Values | Values[] | null;
  /**
   * upsert (default): insert, or update the given columns when they differ; insertMissing: only rows not
   * there yet (a query that shows a few columns of rows another query gives in full); updateOnly: set
   * columns of rows that exist (a fact one query shows of another's rows); delete: remove the rows with
   * these ids (a *Deleted query: what the source deleted).
   */
  mode?: 'upsert' | 'insertMissing' | 'updateOnly' | 'delete';
  /** Columns written on insert only (placeholders of a tombstone): never compared nor updated. */
  insertOnly?: readonly string[];
  /**
   * This query shows every row of the table (within `scope`): after a full read, the target's rows it did
   * not show are deleted. A read from --since is partial and deletes nothing.
   */
  complete?: { scope: 'all' | 'live' | 'tombstones' | 'shownEstimateMonths' };
  /**
   * Batches of this write may go to a second transaction of the tenant, written beside the query's own
   * (decision 0073): only for a table whose rows each appear once in the query and reference only rows of
   * earlier queries, so two transactions never touch one row.
   */
  sideLane?: true;
}

export interface QueryImport {
  namedQuery: string;
  key: string[];
  /** The query takes ModifiedFrom: --since reads only what changed. */
  modifiedFrom?: boolean;
  /** Run in the query's transaction before it is read: loads what its mapping looks up in the target (ids by name). */
  before?: (trx: Trx, tenantId: string, state: RunState) => Promise<void>;
  /** Read before the query's rows (in its transaction's turn): what the rows need of the source's metadata. */
  prepare?: (client: SourceClient, state: RunState) => Promise<void>;
  writes: TableWrite[];
}

/** What one run remembers across queries (logins given out, so two users never share one). */
export interface RunState {
  userNames: Map<string, string>;
  /** A stage of the target typed Draft: where a client the source keeps as a draft is put. */
  draftStageId: string | null;
  /**
   * The target's document types by class name and by full name: queries name a row's document type, and
   * both sides derive those names from the same catalogue (the type ids are each tenant's own).
   */
  documentTypes: { byClass: Map<string, string>; byFullName: Map<string, string>; byName: Map<string, DocumentType> };
  /** A workflow of the target (the source's, once imported): where a stage is placed until its transitions move it. */
  workflowId: string | null;
  /** The target's teams by name (DE-Transitions names a stage's write-teams). */
  teams: Map<string, string>;
  /**
   * One row of each of these tables as the target holds it before each query (null when none): the
   * placeholder references of a row whose own references no query shows (a tombstone's user and job).
   */
  anyId: Record<PlaceholderTable, string | null>;
  /** What the run's queries could not give back, for the report's "Left out" (an approver no user is named). */
  leftOut: string[];
}

/** Tables whose any row can stand in as a placeholder reference (RunState.anyId). */
export const PLACEHOLDER_TABLES = ['users', 'jobs', 'leave_types', 'companies'] as const;
export type PlaceholderTable = (typeof PLACEHOLDER_TABLES)[number];

/** A document type of the target: its id (the source's once re-keyed) and its catalogue names. */
export interface DocumentType {
  id: string;
  className: string;
  fullName: string;
}

export const newRunState = (
  draftStageId: string | null = null,
  documentTypes: RunState['documentTypes'] = { byClass: new Map(), byFullName: new Map(), byName: new Map() },
  workflowId: string | null = null,
  teams: Map<string, string> = new Map(),
): RunState => ({
  userNames: new Map(),
  draftStageId,
  documentTypes,
  workflowId,
  teams,
  anyId: { users: null, jobs: null, leave_types: null, companies: null },
  leftOut: [],
});

/** A login for an imported user: the e-mail when no earlier user has it, else the user's id (logins are unique). */
function loginOf(row: SourceRow, state: RunState): string {
  const uid = String(row.UserId);
  const known = state.userNames.get(uid);
  if (known) return known;
  const email = typeof row.Email === 'string' ? row.Email.trim().toLowerCase() : '';
  const taken = new Set(state.userNames.values());
  const login = email && !taken.has(email) ? email : uid;
  state.userNames.set(uid, login);
  return login;
}

/** A leave's Status back to the stored one: New is a requested draft, none is a canceled leave. */
const leaveStatus = (s: unknown) => (s === 'New' ? 'Draft' : s === null || s === undefined ? 'Canceled' : s);

export const QUERY_IMPORTS: QueryImport[] = [
  // Organisation and master data.
  {
    namedQuery: 'DE-Countries',
    key: ['CountryId'],
    writes: [{ table: 'countries', complete: { scope: 'all' }, values: (r) => ({ id: r.CountryId, name: r.Country }) }],
  },
  {
    namedQuery: 'DE-Cities',
    key: ['CityId'],
    writes: [{ table: 'cities', complete: { scope: 'all' }, values: (r) => ({ id: r.CityId, name: r.City, country_id: r.CountryId }) }],
  },
  {
    namedQuery: 'DE-Currencies',
    key: ['CurrencyId'],
    writes: [
      {
        table: 'currencies',
        complete: { scope: 'all' },
        values: (r) => ({ id: r.CurrencyId, name: r.Currency, iso_code: r.IsoCode, symbol: r.Symbol, modified_on_utc: r.ModifiedOn }),
      },
    ],
  },
  {
    namedQuery: 'DE-Companies',
    key: ['CompanyId'],
    writes: [
      {
        table: 'companies',
        complete: { scope: 'all' },
        values: (r) => ({
          id: r.CompanyId,
          name: r.Name,
          code: r.Code,
          currency_id: r.CurrencyId,
          timesheet_start: r.TimesheetStart,
          resource_type: r.ResourceType,
          hours_type: r.HoursType,
          required_hours: r.RequiredHours,
          margin_type: r.MarginType,
          created_on_utc: r.CreatedOnUtc,
          created_by_id: r.CreatedById,
          modified_on_utc: r.ModifiedOnUtc,
          modified_by_id: r.ModifiedById,
        }),
      },
      // Whether each company has an image (its creator's and modifier's: once users exist, below).
      ...imageFlags(COMPANY),
    ],
  },
  {
    namedQuery: 'DE-Divisions',
    key: ['DivisionId'],
    writes: [{ table: 'divisions', complete: { scope: 'all' }, values: (r) => ({ id: r.DivisionId, name: r.Division, company_id: r.CompanyId }) }],
  },
  {
    namedQuery: 'DE-Departments',
    key: ['DepartmentId'],
    writes: [
      {
        table: 'departments',
        complete: { scope: 'all' },
        values: (r) => ({ id: r.DepartmentId, name: r.Department, company_id: r.CompanyId, division_id: r.DivisionId, modified_on_utc: r.ModifiedOn }),
      },
    ],
  },
  {
    namedQuery: 'DE-Holidays',
    key: ['HolidayId'],
    modifiedFrom: true,
    writes: [
      {
        table: 'holidays',
        complete: { scope: 'all' },
        values: (r) => ({ id: r.HolidayId, name: r.Holiday, date: day(r.Day), company_id: r.CompanyId, modified_on_utc: r.ModifiedOn }),
      },
    ],
  },
  {
    namedQuery: 'DE-Taxes',
    key: ['TaxId'],
    writes: [
      {
        table: 'vats',
        complete: { scope: 'all' },
        values: (r) => ({
          id: r.TaxId,
          name: r.Tax,
          percentage: r.Percentage,
          is_active: r.IsActive,
          external_id: r.ExternalId,
          is_default: r.Default,
          company_id: r.CompanyId,
        }),
      },
    ],
  },
  {
    namedQuery: 'DE-WorkTypes',
    key: ['WorkTypeId'],
    writes: [{ table: 'work_types', complete: { scope: 'all' }, values: (r) => ({ id: r.WorkTypeId, name: r.WorkType, company_id: r.CompanyId }) }],
  },
  // Catalogues: services and their groups, project classifications and natures (DE-ProjectsTypes).
  {
    namedQuery: 'DE-ServicesGroups',
    key: ['ServiceGroupId'],
    writes: [{ table: 'service_groups', complete: { scope: 'all' }, values: (r) => ({ id: r.ServiceGroupId, name: r.ServiceGroup, company_id: r.CompanyId }) }],
  },
  {
    namedQuery: 'DE-Services',
    key: ['ServiceId'],
    writes: [
      {
        table: 'services',
        complete: { scope: 'all' },
        values: (r) => ({
          id: r.ServiceId,
          name: r.Service,
          company_id: r.CompanyId,
          is_active: r.Active,
          internal_service: r.InternalService,
          department_required: r.DepartmentRequired,
          unit_hour: r.UnitHour,
          default_margin: r.DefaultMargin,
          external_id: r.ExternalId,
          vat_deductible_percentage: r.VatDeductiblePercentage,
          unit: r.Unit,
          service_group_id: r.ServiceGroupId,
        }),
      },
    ],
  },
  {
    // DE-Companies again, once services exist: a company's project article is one.
    namedQuery: 'DE-Companies',
    key: ['CompanyId'],
    writes: [{ table: 'companies', mode: 'updateOnly', values: (r) => ({ id: r.CompanyId, project_article_id: r.ProjectArticle }) }],
  },
  {
    namedQuery: 'DE-ProjectsClassifications',
    key: ['ProjectClassificationId'],
    writes: [
      {
        table: 'project_classifications',
        complete: { scope: 'all' },
        values: (r) => ({
          id: r.ProjectClassificationId,
          name: r.ProjectClassification,
          is_active: r.Active,
          billable: r.Billable,
          code: r.Code,
          is_default: r.Default,
          company_id: r.CompanyId,
        }),
      },
    ],
  },
  {
    namedQuery: 'DE-ProjectsTypes',
    key: ['ProjectTypeId'],
    writes: [
      {
        table: 'project_natures',
        complete: { scope: 'all' },
        values: (r) => ({
          id: r.ProjectTypeId,
          name: r.ProjectType,
          company_id: r.CompanyId,
          template_file_name: r.TemplateFileName,
          allows_timesheet: r.AllowsTimesheet,
          is_deliverable: r.IsDeliverable,
          is_active: r.Active,
        }),
      },
    ],
  },
  // People.
  {
    namedQuery: 'DE-UserTypes',
    key: ['UserTypeId'],
    writes: [{ table: 'user_types', complete: { scope: 'all' }, values: (r) => ({ id: r.UserTypeId, name: r.UserType }) }],
  },
  {
    namedQuery: 'DE-TypologyGroups',
    key: ['TypologyGroupId'],
    // Groups without a company drop out of this query; DE-Typologies gives them back by name.
    writes: [{ table: 'typology_groups', values: (r) => ({ id: r.TypologyGroupId, name: r.TypologyGroup, company_id: r.CompanyId }) }],
  },
  {
    namedQuery: 'DE-TypologyGroupsCompanies',
    key: ['Id'],
    writes: [
      {
        table: 'typology_group_companies',
        complete: { scope: 'all' },
        values: (r) => (r.TypologyGroupId && r.CompanyId ? { id: r.Id, typology_group_id: r.TypologyGroupId, company_id: r.CompanyId } : null),
      },
    ],
  },
  {
    namedQuery: 'DE-TypologyGroupsDepartments',
    key: ['Id'],
    writes: [
      {
        table: 'typology_group_departments',
        complete: { scope: 'all' },
        values: (r) => (r.TypologyGroupId && r.DepartmentId ? { id: r.Id, typology_group_id: r.TypologyGroupId, department_id: r.DepartmentId } : null),
      },
    ],
  },
  {
    namedQuery: 'DE-Typologies',
    key: ['TypologyId'],
    writes: [
      {
        table: 'typology_groups',
        mode: 'insertMissing',
        values: (r) => (id(r.TypologyGroupId) ? { id: r.TypologyGroupId, name: r.TypologyGroup } : null),
      },
      {
        table: 'typologies',
        complete: { scope: 'all' },
        values: (r) => ({
          id: r.TypologyId,
          name: r.Typology,
          typology_group_id: r.TypologyGroupId,
          department_id: r.DepartmentId,
          plannable: r.Plannable,
          is_active: r.IsActive,
          hourly_value: r.HourlyValue,
        }),
      },
    ],
  },
  {
    namedQuery: 'DE-Users',
    key: ['UserId'],
    modifiedFrom: true,
    writes: [
      {
        table: 'users',
        complete: { scope: 'all' },
        values: (r, s) => ({
          id: r.UserId,
          user_name: loginOf(r, s),
          name: r.User,
          is_active: r.IsActive,
          department_id: r.DepartmentId,
          company_id: r.CompanyId,
          typology_id: r.TypologyId,
          user_type_id: r.TypeId,
          hire_date: day(r.HireDate),
          expiration_date: day(r.TerminationDate),
          inactivated_on_utc: r.InactivatedOnUtc,
          email: r.Email,
          required_hours: r.RequiredHours,
          city_id: r.CityId,
          modified_on_utc: r.ModifiedOn,
          tax_payer_number: r.TaxPayerNumber,
          external_id: r.ExternalId,
        }),
      },
      // A user without a city shows the company's country: the one fact any query gives of it.
      {
        table: 'companies',
        mode: 'updateOnly',
        values: (r) => (!r.CityId && r.CompanyId && r.CountryId ? { id: r.CompanyId, country_id: r.CountryId } : null),
      },
    ],
  },
  {
    namedQuery: 'DE-Employees',
    key: ['EmployeeId'],
    modifiedFrom: true,
    writes: [
      {
        table: 'employees',
        complete: { scope: 'all' },
        values: (r) => ({ id: r.EmployeeId, name: r.Employee, company_id: r.CompanyId, external_id: r.ExternalId, max_value: r.MaxValue, is_active: r.Active }),
      },
      { table: 'users', mode: 'updateOnly', values: (r) => (id(r.UserId) ? { id: r.UserId, employee_id: r.EmployeeId } : null) },
    ],
  },
  {
    namedQuery: 'DE-UserCosts',
    key: ['UserId', 'StartDate', 'CompanyId', 'CreatedOn'],
    writes: [
      {
        table: 'user_costs',
        complete: { scope: 'all' },
        values: (r) => ({
          id: derivedId('user_costs', r.UserId, r.StartDate, r.CompanyId, r.CreatedOn),
          user_id: r.UserId,
          monthly_value: r.MonthlyValue,
          hourly_value: r.HourlyValue,
          start_date: day(r.StartDate),
          end_date: day(r.EndDate),
          company_id: r.CompanyId,
          currency_id: r.CurrencyId,
          created_on_utc: r.CreatedOn,
          modified_on_utc: r.ModifiedOn,
        }),
      },
    ],
  },
  ...WORKFLOW_IMPORTS,
  // Clients and their master data.
  {
    namedQuery: 'DE-ClientsCompanies',
    key: ['ClientId', 'CompanyId'],
    // Every client (Draft ones too, which DE-Clients leaves out), with each company that has access to it. A
    // client DE-Clients then shows gets its stage from there; one it does not show is a draft on the source.
    writes: [
      {
        table: 'commercial_clients',
        mode: 'insertMissing',
        complete: { scope: 'all' },
        values: (r, s) => ({ id: r.ClientId, name: r.Client, stage_id: s.draftStageId }),
      },
      {
        table: 'client_companies',
        complete: { scope: 'all' },
        values: (r) =>
          id(r.CompanyId) ? { id: derivedId('client_companies', r.ClientId, r.CompanyId), commercial_client_id: r.ClientId, company_id: r.CompanyId } : null,
      },
    ],
  },
  {
    namedQuery: 'DE-Clients',
    key: ['ClientId'],
    modifiedFrom: true,
    writes: [
      { table: 'client_groups', values: (r) => (id(r.ClientGroupId) ? { id: r.ClientGroupId, name: r.ClientGroup } : null) },
      {
        table: 'commercial_clients',
        values: (r) => ({
          id: r.ClientId,
          name: r.Client,
          external_id: r.ExternalId,
          code: r.Code,
          email: r.Email,
          phone: r.Phone,
          head_office: r.HeadOffice,
          street: r.Street,
          street2: r.Street2,
          city: r.Location,
          created_on_utc: r.CreatedOn,
          modified_on_utc: r.ModifiedOn,
          allows_timesheet: r.AllowsTimesheet,
          client_group_id: r.ClientGroupId,
          tax_payer_number: r.TaxPayerNumber,
          margin: r.Margin,
          full_time_employee_time: r.FullTimeEmployeeTime,
          supplier_margin: r.SupplierMargin,
          stage_id: r.StageId,
          manager_id: r.ManagerId,
          owner_id: r.OwnerId,
        }),
      },
      ...imageFlags(
        { table: 'users', idColumn: 'ManagerId', flagColumn: 'ManagerHasImage' },
        { table: 'users', idColumn: 'OwnerId', flagColumn: 'OwnerHasImage' },
      ),
    ],
  },
  {
    // DE-Users again, once the clients exist: which clients each (client) user belongs to.
    namedQuery: 'DE-Users',
    key: ['UserId'],
    writes: [{ table: 'commercial_client_users', complete: { scope: 'all' }, values: (r) => clientUserLinks(r) }],
  },
  {
    // DE-Companies again, once users exist: whether its creator and modifier have an image. Every company,
    // user and client the source still has exists by now: placeholders no entity points at go first.
    namedQuery: 'DE-Companies',
    key: ['CompanyId'],
    before: removeUnusedImagePlaceholders,
    writes: imageFlags(CREATED_BY, MODIFIED_BY),
  },
  {
    namedQuery: 'DE-Brands',
    key: ['BrandId'],
    modifiedFrom: true,
    writes: [
      {
        table: 'brands',
        complete: { scope: 'all' },
        values: (r) => ({ id: r.BrandId, name: r.Brand, commercial_client_id: r.ClientId, modified_on_utc: r.ModifiedOn }),
      },
    ],
  },
  {
    namedQuery: 'DE-Products',
    key: ['ProductId'],
    modifiedFrom: true,
    writes: [
      {
        table: 'products',
        complete: { scope: 'all' },
        values: (r) => ({ id: r.ProductId, name: r.Product, commercial_client_id: r.ClientId, brand_id: r.BrandId, modified_on_utc: r.ModifiedOn }),
      },
    ],
  },
  // Time.
  {
    namedQuery: 'DE-Leaves',
    key: ['LeaveId'],
    modifiedFrom: true,
    before: loadLeaveApprovers,
    writes: [
      {
        // The leave type's company is not shown: the user's company stands for it. Whether the type counts
        // in hours is not shown either: it is imported as hourly, with each leave's hours as shown.
        table: 'leave_types',
        values: (r) =>
          id(r.LeaveTypeId)
            ? {
                id: r.LeaveTypeId,
                name: r.LeaveType,
                year: r.LeaveTypeYear,
                expires_on: day(r.LeaveTypeExpiresOn),
                company_id: r.CompanyId ?? NIL,
                is_hourly: true,
              }
            : null,
      },
      {
        table: 'leaves',
        complete: { scope: 'live' },
        values: (r) => ({
          id: r.LeaveId,
          user_id: r.UserId,
          leave_type_id: r.LeaveTypeId ?? NIL,
          day: day(r.Day),
          is_half_day: r.IsHalfDay,
          total_minutes: Math.round(Number(r.Hours ?? 0) * 60),
          modified_on_utc: r.ModifiedOn,
          requested_approval: r.RequestedApproval,
          status: leaveStatus(r.Status),
          deleted_on: null,
        }),
      },
      // Who approved it: the names shown, resolved to the target's users (src/import/mappings/leave-approvers.ts).
      ...leaveApprovals,
    ],
  },
  // Documents (jobs, with the few columns of their projects DE-Jobs shows) and their time.
  ...PROJECT_IMPORTS,
  {
    namedQuery: 'DE-Jobs',
    key: ['JobId'],
    modifiedFrom: true,
    writes: [
      {
        table: 'projects',
        mode: 'insertMissing',
        values: (r) => ({
          id: r.ProjectId,
          name: r.Project,
          number: r.ProjectNumber,
          commercial_client_id: r.ClientId,
          company_id: r.CompanyId,
          product_id: r.ProductId,
        }),
      },
      {
        table: 'jobs',
        complete: { scope: 'all' },
        values: (r) => ({
          id: r.JobId,
          name: r.Job,
          number: r.JobNumber,
          business_value: r.BusinessValue,
          project_id: r.ProjectId,
          department_id: r.DepartmentId,
          start_date: day(r.StartDate),
          end_date: day(r.EndDate),
          created_by_id: r.CreatedById,
          modified_by_id: r.ModifiedId,
          modified_on_utc: r.ModifiedOn,
          version: r.Version,
          motive: r.Motive,
          stage_id: r.StageId,
          job_type_id: r.TypeId,
        }),
      },
      // A stage's and a stage type's colour show where documents are (not in DE-Stages).
      ...stageColours,
      // The stage's Delayed flag, where a job shows it: a job past its agreed date is late exactly when its stage has it.
      { table: 'workflow_stages', mode: 'updateOnly', values: (r) => stageDelayed(r) },
      // Whether its client, creator and modifier have an image (the company's: DE-Companies).
      ...imageFlags(CLIENT, CREATED_BY, MODIFIED),
    ],
  },
  {
    namedQuery: 'DE-TimeSheets',
    key: ['TimesheetId'],
    modifiedFrom: true,
    writes: [
      {
        table: 'timesheets',
        complete: { scope: 'live' },
        sideLane: true,
        values: (r) => ({
          id: r.TimesheetId,
          user_id: r.UserId,
          date: day(r.Day),
          duration_minutes: Math.round(Number(r.Hours) * 60),
          job_id: r.JobId,
          status: r.Status,
          modified_on_utc: r.ModifiedOn,
          requested_approval: r.RequestedApproval,
          is_billable: r.IsBillable,
          booked_company_id: r.CompanyId,
          booked_department_id: r.UserDepartmentId,
          // Not shown: the user's typology (DE-TimeSheets' TypologyId) stands for the one booked (docs/import.md).
          booked_typology_id: r.TypologyId,
          booked_hourly_cost: r.HourlyUserCost,
          work_type_id: r.WorkTypeId,
        }),
      },
      // A product's code and external id show only here.
      {
        table: 'products',
        mode: 'updateOnly',
        values: (r) => (id(r.ProductId) ? { id: r.ProductId, code: r.ProductCode, external_id: r.ProductExternalId } : null),
      },
    ],
  },
  // Finance: expense types, suppliers, rate cards (src/import/mappings/finance.ts).
  ...FINANCE_IMPORTS,
  // DE-Projects again, once rate cards exist: each project's rate card and column (shown by name).
  ...PROJECT_RATE_CARD_IMPORTS,
  // Planning: projects' additional information and planned time (src/import/mappings/planning.ts).
  ...PLANNING_IMPORTS,
  // Requests, bills and purchase orders (src/import/mappings/requests-and-purchasing.ts).
  ...REQUEST_AND_PURCHASING_IMPORTS,
  // Collaboration: teams and assignments, comments and replies, descriptions, history.
  {
    namedQuery: 'DE-Assignments',
    key: ['DocumentId', 'TeamId', 'UserId'],
    before: loadUntypedEstimates,
    writes: [
      {
        table: 'teams',
        values: (r, s) => {
          if (!id(r.TeamId)) return null;
          s.teams.set(String(r.Team), String(r.TeamId));
          return { id: r.TeamId, name: r.Team };
        },
      },
      {
        table: 'assignments',
        complete: { scope: 'all' },
        values: (r, s) => {
          const type = s.documentTypes.byClass.get(String(r.DocumentType));
          if (!type || !id(r.TeamId) || !id(r.UserId)) return null;
          return {
            id: derivedId('assignments', r.DocumentId, r.TeamId, r.UserId),
            document_id: r.DocumentId,
            document_type_id: type,
            team_id: r.TeamId,
            user_id: r.UserId,
            modified_on_utc: r.ModifiedOnUtc,
            modified_by_id: r.ModifiedById,
          };
        },
      },
      // A Draft or Canceled estimate's type shows only as its assignments' DocumentSubType.
      estimateTypeFromAssignments,
    ],
  },
  ...WORKFLOW_TEAM_IMPORTS,
  {
    namedQuery: 'DE-Comments',
    key: ['CommentsId'],
    writes: [
      {
        table: 'comments',
        complete: { scope: 'all' },
        values: (r, s) => {
          const type = s.documentTypes.byFullName.get(String(r.DocumentType));
          if (!type) return null;
          return {
            id: r.CommentsId,
            document_type_id: type,
            document_id: r.DocumentId,
            created_by_id: r.CreatedById,
            created_on_utc: r.CreatedOnUtc,
            modified_on_utc: r.ModifiedOnUtc,
            text: r.Text,
            is_visible_to_client: r.IsVisibleToClient,
            actions: jsonText(r.Actions),
            reactions: jsonText(r.Reactions),
          };
        },
      },
      ...imageFlags(CREATED_BY),
    ],
  },
  {
    namedQuery: 'DE-CommentsReplies',
    key: ['ReplyId'],
    writes: [
      {
        table: 'comment_replies',
        complete: { scope: 'all' },
        values: (r) => ({
          id: r.ReplyId,
          comment_id: r.CommentsId,
          created_by_id: r.CreatedById,
          text: r.Text,
          created_on_utc: r.CreatedOnUtc,
          modified_on_utc: r.ModifiedOnUtc,
          reactions: jsonText(r.Reactions),
          mentions: jsonText(r.Mentions),
        }),
      },
      ...imageFlags(CREATED_BY),
    ],
  },
  {
    namedQuery: 'DE-Descriptions',
    key: ['DescriptionId'],
    writes: [
      {
        table: 'descriptions',
        complete: { scope: 'all' },
        values: (r, s) => {
          const type = s.documentTypes.byFullName.get(String(r.Document));
          if (!type) return null;
          return {
            id: r.DescriptionId,
            plain_text: r.Description,
            text_html: r.DescriptionHtml,
            version: r.Version,
            document_id: r.DocumentId,
            document_type_id: type,
            created_on_utc: r.CreatedOn,
            created_by_id: r.CreatedById,
            modified_on_utc: r.ModifiedOn,
          };
        },
      },
    ],
  },
  {
    namedQuery: 'DE-History',
    key: ['HistoryId'],
    writes: [
      {
        table: 'document_history',
        complete: { scope: 'all' },
        values: (r, s) => {
          const type = s.documentTypes.byFullName.get(String(r.DocumentType));
          if (!type) return null;
          return {
            id: r.HistoryId,
            document_type_id: type,
            document_id: r.DocumentId,
            version: r.Version,
            start_date: r.StartDate,
            end_date: r.EndDate,
            user_id: r.UserId,
            action: r.Action,
            stage_id: r.StageId,
            created_on_utc: r.CreatedOnUtc,
          };
        },
      },
      // Stages no job is in show their colours here.
      ...stageColours,
      ...imageFlags({ table: 'users', idColumn: 'UserId', flagColumn: 'UserHasImage' }),
    ],
  },
  ...TOMBSTONE_IMPORTS,
  ...PEOPLE_EXTRAS,
];

/**
 * A job's stage's Delayed flag, when the job shows it: IsDelayed is "past the agreed date and the stage is
 * Delayed", so a job past its date tells the flag; any other job tells nothing (null: not written).
 */
function stageDelayed(r: SourceRow): Values | null {
  if (!id(r.StageId) || typeof r.EndDate !== 'string') return null;
  const today = new Date().toISOString().slice(0, 10);
  if (r.EndDate.slice(0, 10) >= today) return null;
  return { id: r.StageId, delayed: r.IsDelayed === true };
}

/** DE-Users' ClientIds: the user's client links (the second DE-Users pass writes them). */
export function clientUserLinks(r: SourceRow): Values[] {
  if (typeof r.ClientIds !== 'string' || !r.ClientIds) return [];
  return r.ClientIds.split(',').map((cid) => ({
    id: derivedId('commercial_client_users', r.UserId, cid.trim()),
    user_id: r.UserId,
    commercial_client_id: cid.trim(),
  }));
}
