// Every document type of the Client API, listed once (projects, jobs, contracts, requests, estimates,
// expense sheets and items) and passed to the routes and services that find a type by name, rather
// than registered by importing each type's module for its side effect.
import { contract, job, project, request } from './documents/document-types.ts';
import { DocumentTypes } from './documents/registry.ts';
import { estimate } from './estimates/estimate-type.ts';
import { expense, expenseItem } from './expenses/expense-type.ts';

export const CLIENT_DOCUMENT_TYPES = new DocumentTypes([project, job, contract, request, estimate, expense, expenseItem]);
