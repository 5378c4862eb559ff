// Named queries of this area (definitions only; the engine in src/extraction runs them): jobs, projects,
// requests, contracts and the workflow, service and rate-card catalogues behind them.
import type { NamedQueryDefinition } from '../definition.ts';
import { projectsClassifications, projectsTypes, rateCardsColumns, services, servicesGroups } from './jobs-and-projects/catalogues.ts';
import { jobs, jobsCount } from './jobs-and-projects/jobs.ts';
import { projects, projectsAdditionalInformation, projectsCount, projectsPlannedTime, projectsPlannedTimeCount } from './jobs-and-projects/projects.ts';
import { contracts, requests } from './jobs-and-projects/requests-and-contracts.ts';
import { stages, transitions, types } from './jobs-and-projects/workflow.ts';

export const jobsAndProjects: NamedQueryDefinition[] = [
  jobs,
  jobsCount,
  projects,
  projectsCount,
  projectsClassifications,
  projectsAdditionalInformation,
  projectsPlannedTime,
  projectsPlannedTimeCount,
  projectsTypes,
  requests,
  contracts,
  stages,
  transitions,
  types,
  services,
  servicesGroups,
  rateCardsColumns,
];
