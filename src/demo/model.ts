// Demo data: the in-memory model of the generated agency, what later areas need to stay coherent.
import type { Rng } from './random.ts';
import type { DeptKind, StageType } from './vocabulary.ts';

export interface Workflow {
  id: string;
  stage: Record<StageType, string>;
  transitions: Array<{ id: string; name: string }>;
}
export interface Typology {
  id: string;
  name: string;
  groupId: string;
  sell: number;
}
export interface Dept {
  id: string;
  kind: DeptKind;
  company: Company;
  typologies: Typology[];
  staff: User[];
}
export interface JobType {
  id: string;
  name: string;
  kind: DeptKind | null;
  serviceId: string;
  workTypeId: string;
}
export interface Company {
  id: string;
  code: string;
  name: string;
  currency: string;
  currencyId: string;
  countryIso: string;
  depts: Dept[];
  vat: { standard: string; intermediate: string; reduced: string; exempt: string };
  pay: { immediate: string; d30: string; d60: string };
  services: Record<string, string>;
  workTypes: Record<string, string>;
  suppliers: string[];
  projectTypes: Record<string, string>;
  classifications: Record<string, string>;
  natures: Record<string, string>;
  jobTypes: JobType[];
  requestTypes: string[];
  estimateTypes: string[];
  contractTypes: string[];
  rateCardId: string;
  rateColumns: { y2024: string; y2025: string };
  /** 2025 sell rate by department and typology group. */
  rates: Map<string, number>;
  leaveTypes: { vac2024: string; vac2025: string; sick: string; medical: string };
  expenseTypes: Array<{ id: string; name: string; vatId: string; unit: number | null }>;
  holidays: Set<number>;
  staff: User[];
  internalJobs: Job[];
  domain: string;
}
export interface User {
  id: string;
  name: string;
  company: Company;
  dept: Dept;
  typology: Typology;
  responsibleId: string | null;
  regular: boolean;
  active: boolean;
  firstDay: number;
  lastDay: number;
  hourly2025H1: number;
  hourly2025H2: number;
  requiredMinutes: number;
  pool: Job[];
}
export interface ClientE {
  id: string;
  name: string;
  home: Company;
  companies: Company[];
  brands: string[];
  products: Array<{ id: string; brandId: string | null }>;
  billing: Map<string, string>;
  managerId: string;
  internal: boolean;
  contracts: Contract[];
  users: string[];
}
export interface Contract {
  id: string;
  company: Company;
  client: ClientE;
}
export interface Project {
  id: string;
  number: string;
  name: string;
  company: Company;
  client: ClientE;
  contractId: string | null;
  brandId: string | null;
  productId: string | null;
  start: number;
  end: number;
  stage: StageType;
  billable: boolean;
  managerId: string;
  estimates: Array<{ id: string; deptId: string; items: string[] }>;
  jobs: Job[];
}
export interface Job {
  id: string;
  project: Project;
  start: number;
  end: number;
  workTypeId: string;
  billable: boolean;
  internal: boolean;
  stage: StageType;
}

/** One row per job, kept for the collaboration area (history, comments, reads of each job). */
export interface JobRow {
  job: Job;
  number: string;
  name: string;
  deptId: string;
  typeId: string;
  created: number;
  modified: number;
  version: number;
  by: string;
}

/** What the areas hand on to the areas after them, each area adding its part. */
export interface Agency {
  countryId: Map<string, string>;
  cityIds: Map<string, string[]>;
  currencyId: Map<string, string>;
  mainCountryIso: string;
  mainCurrencyIso: string;
  fileRng: Rng;
  imagesFolder: string;
  projectsFolder: string;
  imageFile: (name: string) => string;
  companies: Company[];
  companyImages: Map<string, string>;
  mainCompany: Company;
  divisionIds: Map<string, string>;
  team: Record<string, string>;
  workflows: Map<string, Workflow>;
  wf: (cls: string) => Workflow;
  bot: Map<string, string>;
  briefing: string[];
  groupId: Map<string, string>;
  users: User[];
  uniqueUserName: (first: string, last: string) => string;
  deptManager: Map<string, User>;
  extraCompanies: Company[];
  ceo: User;
  officeManager: User;
  staffOf: (c: Company) => User[];
  staffOfDept: (d: Dept) => User[];
  accountsDept: (c: Company) => Dept;
  internalClient: Map<string, ClientE>;
  realClients: ClientE[];
  contracts: Contract[];
  projects: Project[];
  jobs: Job[];
  jobRows: JobRow[];
  assign: (docTypeId: string, docId: string, teamName: string, userId: string, day: number, by: string | null) => void;
  requestRows: Array<{ id: string; created: number; by: string; stage: StageType }>;
  estimateRows: Array<{ id: string; stage: StageType; created: number; by: string; approverId: string }>;
  poRows: Array<{ id: string; stage: StageType; created: number; approverId: string }>;
  billRows: Array<{ id: string; created: number; by: string }>;
  leaveMinutes: Map<string, Map<number, number>>;
  leaveApprovals: Array<{ id: string; user: User; status: string; day: number; type: 'vac' | 'other' }>;
  workingDays: (from: number, count: number, u: User, until?: number) => number[];
}
