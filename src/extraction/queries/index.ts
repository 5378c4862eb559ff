// Every named query definition. Each file below owns one area of the catalogue.
import type { NamedQueryDefinition } from '../definition.ts';
import { clientsAndFinance } from './clients-and-finance.ts';
import { jobsAndProjects } from './jobs-and-projects.ts';
import { peopleAndTime } from './people-and-time.ts';

export const NAMED_QUERIES: NamedQueryDefinition[] = [...peopleAndTime, ...jobsAndProjects, ...clientsAndFinance];
