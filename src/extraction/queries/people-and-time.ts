// Named queries of this area (definitions only; the engine in src/extraction runs them): people,
// organisation master data, time (timesheets, leaves, attendances, workloads) and collaboration.
import type { NamedQueryDefinition } from '../definition.ts';
import { adBlocker } from './people-and-time/ad-blocker.ts';
import { collaboration } from './people-and-time/collaboration.ts';
import { organisation } from './people-and-time/organisation.ts';
import { people } from './people-and-time/people.ts';
import { time } from './people-and-time/time.ts';

export const peopleAndTime: NamedQueryDefinition[] = [...time, ...people, ...organisation, ...collaboration, ...adBlocker];
