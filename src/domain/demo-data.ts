// Demo data generator: fills every table of the agency model with one coherent, deterministic agency (same
// seed + scale => same rows and ids). One module per area under demo-data/, each over the shared context
// (random streams, row sink, audit columns) and handing on what later areas need; rows are loaded with COPY.
import type { TenantDefaults } from './bootstrap.ts';
import { addCatalogues } from './demo-data/catalogues.ts';
import { addClients } from './demo-data/clients.ts';
import { addCollaboration } from './demo-data/collaboration.ts';
import { createDemoContext, type DemoOptions } from './demo-data/context.ts';
import { addEstimates } from './demo-data/estimates.ts';
import { addExpenses } from './demo-data/expenses.ts';
import { addFiles } from './demo-data/files.ts';
import { addGeography } from './demo-data/geography.ts';
import { addLeaves } from './demo-data/leaves.ts';
import { loadDemoData } from './demo-data/load.ts';
import { addOrganisation } from './demo-data/organisation.ts';
import { addPeople } from './demo-data/people.ts';
import { addProjects } from './demo-data/projects.ts';
import { addPurchases } from './demo-data/purchases.ts';
import type { Db } from './demo-data/sink.ts';
import { prepareTimesheets } from './demo-data/timesheets.ts';
import { addUserFields } from './demo-data/user-fields.ts';
import { addWorkflows } from './demo-data/workflows.ts';

export type { DemoOptions, LoadProgress } from './demo-data/context.ts';
export { LOAD_ORDER as DEMO_TABLES } from './demo-data/sink.ts';

export async function generateDemoData(db: Db, tenantId: string, defaults: TenantDefaults, opts: DemoOptions): Promise<{ rows: Record<string, number> }> {
  const started = Date.now();
  const ctx = await createDemoContext(db, tenantId, defaults, opts);
  // Generating is synchronous work; between areas the event loop gets a turn, so an abort (Ctrl-C) is seen.
  const checkpoint = async (): Promise<void> => {
    await new Promise((resolve) => setImmediate(resolve));
    opts.signal?.throwIfAborted();
  };
  // The areas run in this order because each draws ids from streams and rows that the earlier ones made.
  const geography = addGeography(ctx);
  const files = addFiles(ctx);
  const organisation = addOrganisation(ctx, { ...geography, ...files });
  const workflows = addWorkflows(ctx);
  await checkpoint();
  const people = addPeople(ctx, { ...geography, ...files, ...organisation });
  await checkpoint();
  addCatalogues(ctx, { ...geography, ...organisation, ...workflows, ...people });
  const clients = addClients(ctx, { ...geography, ...files, ...organisation, ...workflows, ...people });
  await checkpoint();
  const projects = addProjects(ctx, { ...organisation, ...workflows, ...people, ...clients });
  await checkpoint();
  const estimates = addEstimates(ctx, { ...geography, ...workflows, ...people, ...projects });
  await checkpoint();
  const purchases = addPurchases(ctx, { ...workflows, ...people, ...projects });
  addExpenses(ctx, { ...workflows, ...people });
  const leaves = addLeaves(ctx, people);
  await checkpoint();
  addUserFields(ctx, { ...organisation, ...people, ...clients, ...projects });
  await checkpoint();
  addCollaboration(ctx, { ...files, ...organisation, ...workflows, ...people, ...projects, ...estimates, ...purchases, ...leaves });
  await checkpoint();
  const timesheets = prepareTimesheets(ctx, { ...people, ...leaves });
  ctx.log(`rows generated in ${Date.now() - started} ms`);
  return loadDemoData(ctx, timesheets, organisation, started);
}
