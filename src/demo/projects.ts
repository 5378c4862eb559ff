// Demo data: contracts, projects and jobs with their team assignments, then requests.
import type { DemoContext } from './context.ts';
import { ds, mkDay, NOW, ts, YEAR_START } from './dates.ts';
import type { Agency, Contract, Dept, Job, JobRow, JobType, Project, User } from './model.ts';
import type { Rng } from './random.ts';
import { type StageType, THINGS } from './vocabulary.ts';

export function addProjects(
  ctx: DemoContext,
  a: Pick<Agency, 'companies' | 'team' | 'wf' | 'deptManager' | 'ceo' | 'staffOf' | 'staffOfDept' | 'accountsDept' | 'internalClient' | 'realClients'>,
): Pick<Agency, 'contracts' | 'projects' | 'jobs' | 'jobRows' | 'assign' | 'requestRows'> {
  const { n, rngFor, add, audit, T } = ctx;
  const { companies, team, wf, deptManager, ceo, staffOf, staffOfDept, accountsDept, internalClient, realClients } = a;
  const rDoc = rngFor('documents');
  const stageByDates = (start: number, end: number, r: Rng): StageType => {
    if (end < NOW - 20) return r.chance(0.92) ? 'Completed' : 'Canceled';
    if (start > NOW - 45) return r.chance(0.5) ? 'Draft' : 'In Progress';
    return 'In Progress';
  };
  const contracts: Contract[] = [];
  const contractCount = n(15);
  for (let i = 0; i < contractCount; i++) {
    const cl = rDoc.pick(realClients);
    const ct: Contract = { id: rDoc.uuid(), company: cl.home, client: cl };
    contracts.push(ct);
    cl.contracts.push(ct);
    const start = mkDay(2025, 1, 1) + rDoc.int(0, 120);
    const product = rDoc.pick(cl.products);
    const stage: StageType = rDoc.chance(0.85) ? 'In Progress' : rDoc.chance(0.5) ? 'Draft' : 'Canceled';
    add('contracts', {
      id: ct.id,
      company_id: cl.home.id,
      commercial_client_id: cl.id,
      brand_id: product.brandId,
      product_id: product.id,
      type_id: rDoc.pick(cl.home.contractTypes),
      currency_id: cl.home.currencyId,
      workflow_id: wf('Contract').id,
      stage_id: wf('Contract').stage[stage],
      number: `CTR-${String(i + 1).padStart(5, '0')}`,
      name: `${cl.name} ${rDoc.pick(['Retainer', 'Framework', 'Annual Agreement'])} 2025`,
      start_date: ds(start),
      end_date: ds(start + 364),
      ...audit(start - 15, 600, cl.managerId, start + rDoc.int(0, 60), 650),
    });
  }

  const projects: Project[] = [];
  const projectCount = n(50, 4);
  for (let i = 0; i < projectCount; i++) {
    const cl = rDoc.pick(realClients);
    const contract = cl.contracts.length > 0 && rDoc.chance(0.5) ? rDoc.pick(cl.contracts) : null;
    const company = contract ? contract.company : rDoc.pick(cl.companies);
    const start = mkDay(2024, 10, 1) + rDoc.int(0, 360);
    const end = start + rDoc.int(30, 240);
    const stage = stageByDates(start, end, rDoc);
    const classification = rDoc.chance(0.85) ? 'Billable' : rDoc.chance(0.6) ? 'Pitch' : 'Non-billable';
    const product = rDoc.chance(0.9) ? rDoc.pick(cl.products) : null;
    const p: Project = {
      id: rDoc.uuid(),
      number: `PRJ-${String(i + 1).padStart(5, '0')}`,
      name: `${cl.name} - ${rDoc.pick(THINGS)} ${rDoc.pick(['Launch', 'Campaign', 'Refresh', 'Q1', 'Q3', 'Always-on'])}`,
      company,
      client: cl,
      contractId: contract?.id ?? null,
      brandId: product?.brandId ?? (cl.brands.length > 0 && rDoc.chance(0.5) ? rDoc.pick(cl.brands) : null),
      productId: product?.id ?? null,
      start,
      end,
      stage,
      billable: classification === 'Billable',
      managerId: cl.home === company ? cl.managerId : rDoc.pick(staffOfDept(accountsDept(company))).id,
      estimates: [],
      jobs: [],
    };
    projects.push(p);
    add('projects', {
      id: p.id,
      company_id: company.id,
      commercial_client_id: cl.id,
      contract_id: p.contractId,
      brand_id: p.brandId,
      product_id: p.productId,
      project_type_id: company.projectTypes[contract ? 'Retainer' : 'Campaign'],
      classification_id: company.classifications[classification],
      nature_id: company.natures[contract ? 'Recurring' : 'New Business'],
      currency_id: company.currencyId,
      rate_card_id: company.rateCardId,
      rate_card_column_id: company.rateColumns.y2025,
      workflow_id: wf('Project').id,
      stage_id: wf('Project').stage[stage],
      number: p.number,
      name: p.name,
      start_date: ds(start),
      end_date: ds(end),
      // Money: one project in twenty is an agency investment of 5,000 to 50,000 (from its index, so no draw is added).
      investment: rDoc.chance(0.05) ? 5000 * (1 + (i % 10)) : 0,
      ...audit(start - rDoc.int(5, 20), 600, p.managerId, Math.min(NOW - 1, end + rDoc.int(0, 10)), 660),
    });
  }
  // One internal project per company carries non-billable time (meetings, training, pitches).
  const internalProjects: Project[] = [];
  for (const c of companies) {
    const cl = internalClient.get(c.id)!;
    const p: Project = {
      id: rDoc.uuid(),
      number: `INT-${c.code}`,
      name: `Internal Time ${c.name}`,
      company: c,
      client: cl,
      contractId: null,
      brandId: null,
      productId: null,
      start: mkDay(2025, 1, 1),
      end: mkDay(2025, 12, 31),
      stage: 'In Progress',
      billable: false,
      managerId: ceo.id,
      estimates: [],
      jobs: [],
    };
    internalProjects.push(p);
    add('projects', {
      id: p.id,
      company_id: c.id,
      commercial_client_id: cl.id,
      contract_id: null,
      brand_id: null,
      product_id: null,
      project_type_id: c.projectTypes.Internal,
      classification_id: c.classifications['Non-billable'],
      nature_id: c.natures.Internal,
      currency_id: c.currencyId,
      rate_card_id: null,
      rate_card_column_id: null,
      workflow_id: wf('Project').id,
      stage_id: wf('Project').stage['In Progress'],
      number: p.number,
      name: p.name,
      start_date: ds(p.start),
      end_date: ds(p.end),
      investment: 0,
      ...audit(mkDay(2024, 12, 15), 600, ceo.id),
    });
  }

  const jobs: Job[] = [];
  const assignmentKeys = new Set<string>();
  const assign = (docTypeId: string, docId: string, teamName: string, userId: string, day: number, by: string | null): void => {
    const key = `${docId}:${teamName}:${userId}`;
    if (assignmentKeys.has(key)) return;
    assignmentKeys.add(key);
    add('assignments', { id: rDoc.uuid(), document_type_id: docTypeId, document_id: docId, team_id: team[teamName], user_id: userId, ...audit(day, 600, by) });
  };
  const jobRows: JobRow[] = [];
  let jobSeq = 0;
  const addJob = (p: Project, jt: JobType, dept: Dept, start: number, end: number, stage: StageType, name: string, members: User[], internal: boolean): Job => {
    const job: Job = { id: rDoc.uuid(), project: p, start, end, workTypeId: jt.workTypeId, billable: p.billable && !internal, internal, stage };
    jobSeq++;
    p.jobs.push(job);
    jobs.push(job);
    const created = start - rDoc.int(1, 5);
    const modified =
      stage === 'Completed' || stage === 'Canceled' ? Math.min(NOW - 1, end + rDoc.int(0, 3)) : Math.min(NOW - 1, Math.max(created, NOW - rDoc.int(1, 40)));
    const version = stage === 'Draft' ? 1 : stage === 'In Progress' ? 2 : 3;
    jobRows.push({ job, number: `JOB-${String(jobSeq).padStart(6, '0')}`, name, deptId: dept.id, typeId: jt.id, created, modified, version, by: p.managerId });
    add('jobs', {
      id: job.id,
      project_id: p.id,
      department_id: dept.id,
      job_type_id: jt.id,
      workflow_id: wf('Deliverable').id,
      stage_id: wf('Deliverable').stage[stage],
      number: `JOB-${String(jobSeq).padStart(6, '0')}`,
      name,
      business_value: internal ? null : rDoc.int(1, 5),
      start_date: ds(start),
      end_date: ds(end),
      version,
      motive: stage === 'Canceled' ? rDoc.pick(['Client canceled', 'Budget cut', 'Duplicate']) : null,
      ...audit(created, 600 + rDoc.int(0, 300), p.managerId, modified, 600 + rDoc.int(0, 500), rDoc.pick(members).id),
    });
    for (const [k, u] of members.entries()) {
      assign(T.job, job.id, internal ? 'Creative' : k === 0 ? 'Producer' : 'Creative', u.id, created, p.managerId);
      u.pool.push(job);
    }
    if (!internal) assign(T.job, job.id, 'Project Manager', p.managerId, created, p.managerId);
    // Timesheet approvers of the job: its project manager, or the department manager for internal time.
    assign(T.job, job.id, 'Approver', internal ? (deptManager.get(dept.id) ?? ceo).id : p.managerId, created, p.managerId);
    return job;
  };
  const jobCount = n(300, 12);
  for (let j = 0; j < jobCount; j++) {
    const p = j < projects.length ? projects[j] : rDoc.pick(projects);
    const jt = rDoc.pick(p.company.jobTypes.filter((t) => t.kind !== null));
    const dept = p.company.depts.find((d) => d.kind === jt.kind) ?? p.company.depts[0];
    const span = Math.max(1, p.end - p.start);
    const start = p.start + rDoc.int(0, Math.floor(span * 0.6));
    const end = Math.min(p.end, start + rDoc.int(7, 60));
    let stage: StageType = p.stage === 'Canceled' ? 'Canceled' : p.stage === 'Draft' ? 'Draft' : stageByDates(start, end, rDoc);
    if (stage === 'Completed' && rDoc.chance(0.08)) stage = 'In Progress'; // overdue jobs (DE-Jobs Delayed)
    const pool = staffOfDept(dept);
    const members = rDoc.sample(pool, Math.min(pool.length, rDoc.int(2, 3)));
    if (rDoc.chance(0.25)) {
      const other = rDoc.pick(staffOf(p.company));
      if (!members.includes(other)) members.push(other);
    }
    addJob(p, jt, dept, start, end, stage, `${jt.name} - ${rDoc.pick(THINGS)}`, members, false);
  }
  for (const p of internalProjects) {
    const c = p.company;
    const jt = c.jobTypes.find((t) => t.kind === null)!;
    const dept = c.depts[0];
    for (const name of ['Internal Time', 'Training', 'New Business Pitches']) {
      const job = addJob(p, jt, dept, p.start, p.end, 'In Progress', `${name} ${c.code}`, staffOf(c), true);
      job.workTypeId = name === 'Training' ? c.workTypes.Training : name === 'New Business Pitches' ? c.workTypes.Pitch : c.workTypes.Meeting;
      c.internalJobs.push(job);
    }
  }
  for (const p of projects) {
    assign(T.project, p.id, 'Account Manager', p.client.managerId, p.start - 10, p.managerId);
    assign(T.project, p.id, 'Project Manager', p.managerId, p.start - 10, p.managerId);
    for (const cu of p.client.users) assign(T.project, p.id, 'Client Contact', cu, p.start - 10, p.managerId);
  }

  // Requests.
  const requestRows: Array<{ id: string; created: number; by: string; stage: StageType }> = [];
  const requestCount = n(40);
  for (let i = 0; i < requestCount; i++) {
    const cl = rDoc.pick(realClients);
    const dept = accountsDept(cl.home);
    const begin = YEAR_START + rDoc.int(0, 360);
    const stage = stageByDates(begin, begin + 14, rDoc);
    const product = rDoc.pick(cl.products);
    const by = cl.users.length > 0 && rDoc.chance(0.3) ? rDoc.pick(cl.users) : cl.managerId;
    const id = rDoc.uuid();
    requestRows.push({ id, created: begin - 1, by, stage });
    const labels = rDoc.sample(['Urgent', 'Digital', 'Print', 'Social', 'Budget approved'], rDoc.int(0, 2));
    add('requests', {
      id,
      department_id: dept.id,
      commercial_client_id: cl.id,
      brand_id: product.brandId,
      product_id: product.id,
      contract_id: cl.contracts.length > 0 && rDoc.chance(0.3) ? rDoc.pick(cl.contracts).id : null,
      type_id: rDoc.pick(cl.home.requestTypes),
      workflow_id: wf('Request').id,
      stage_id: wf('Request').stage[stage],
      number: `REQ-${String(i + 1).padStart(5, '0')}`,
      name: `${rDoc.pick(['New', 'Update', 'Adapt'])} ${rDoc.pick(THINGS)}`,
      begin_date_utc: ts(begin, 540),
      end_date_utc: ts(begin + rDoc.int(3, 30), 1080),
      tags: labels.map((label) => ({ label })),
      is_activated: stage === 'Completed',
      priority: rDoc.int(0, 3),
      version: stage === 'Draft' ? 1 : rDoc.int(2, 3),
      ...audit(begin - 1, rDoc.int(540, 1000), by, Math.min(NOW - 1, begin + rDoc.int(0, 20)), 700, cl.managerId),
    });
    assign(T.request, id, 'Account Manager', cl.managerId, begin - 1, by);
  }
  return { contracts, projects, jobs, jobRows, assign, requestRows };
}
