// Demo data generator: fills every table of the agency model with one coherent, deterministic agency (same
// seed + scale => same rows and ids). One module per area under demo-data/, each over the shared context
// (random streams, row sink, audit columns) and handing on what later areas need; rows are loaded with COPY.
import type { TenantDefaults } from '../domain/bootstrap.ts';
import { addCatalogues } from './catalogues.ts';
import { addClients } from './clients.ts';
import { addCollaboration } from './collaboration.ts';
import { createDemoContext, type DemoOptions } from './context.ts';
import { addEstimates } from './estimates.ts';
import { addExpenses } from './expenses.ts';
import { addFiles } from './files.ts';
import { addGeography } from './geography.ts';
import { addLeaves } from './leaves.ts';
import { loadDemoData } from './load.ts';
import { addOrganisation } from './organisation.ts';
import { addPeople } from './people.ts';
import { addProjects } from './projects.ts';
import { addPurchases } from './purchases.ts';
import type { Db } from './sink.ts';
import { prepareTimesheets } from './timesheets.ts';
import { addUserFields } from './user-fields.ts';
import { addWorkflows } from './workflows.ts';

export type { DemoOptions, LoadProgress } from './context.ts';
export { LOAD_ORDER as DEMO_TABLES } from './sink.ts';

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
