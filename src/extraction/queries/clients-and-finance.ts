// Named queries of the clients-and-finance area (definitions only; the engine in src/extraction runs
// them): clients and suppliers master data, bills, purchase orders, expenses, estimates and the
// estimated/planned/actual monthly report. See docs/named-queries.md.
import type { NamedQueryDefinition } from '../definition.ts';
import { estimatedPlannedActual } from './clients-and-finance/estimated-planned-actual.ts';
import { estimates } from './clients-and-finance/estimates.ts';
import { masterData } from './clients-and-finance/master-data.ts';
import { purchasesAndBilling } from './clients-and-finance/purchases-and-billing.ts';

export const clientsAndFinance: NamedQueryDefinition[] = [...masterData, ...purchasesAndBilling, ...estimates, ...estimatedPlannedActual];
