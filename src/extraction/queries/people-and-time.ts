// Named queries of this area (definitions only; the engine in src/extraction runs them).
import type { NamedQueryDefinition } from '../definition.ts';

export const peopleAndTime: NamedQueryDefinition[] = [];
