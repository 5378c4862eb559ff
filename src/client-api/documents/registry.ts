// What a document type of the Client API is (DocumentDef) and the lookup by name the v3 routes, PATCH,
// posts' Actions.Document, team assignments, briefs and file links use (DocumentTypes). The types
// themselves are listed in ../document-type-list.ts.
import type { RawBuilder } from 'kysely';
import type { TSchema } from 'typebox';
import type { Principal } from '../../platform/auth/principal.ts';
import type { RoleName } from '../../platform/auth/roles.ts';
import type { Trx } from '../../platform/db/database.ts';
import type { TableName } from '../../platform/db/schema.ts';
import { HttpProblem } from '../../platform/errors.ts';
import { fullTypeName } from '../../platform/events/catalogue.ts';
import type { Field } from './fields.ts';

export type Row = Record<string, unknown>;

export interface WriteHookArgs {
  trx: Trx;
  actor: Principal;
  /** The model as sent (after case folding), and its JSON path for field errors. */
  model: Row;
  path: string;
  /** Column values about to be written; a hook may fill defaults in. */
  values: Row;
  /** The stored row on update; null on create. */
  before: Row | null;
}

export interface DocumentDef {
  /** The name clients send as DocumentTypeName / DocumentType (Project, Job, Contract, Request). */
  type: string;
  /** document_types.class_name, the type of events and of "any document" links (Deliverable for jobs). */
  className: string;
  /** Other names accepted for the type (compared without regard to case). */
  aliases: string[];
  table: TableName;
  roles: { read: RoleName; write: RoleName };
  /** Prefix of numbers given to documents created without one. */
  numberPrefix: string;
  fields: Field[];
  /** Properties that are not columns of the document (team members, derived flags): in the schema, used by the hooks. */
  extras?: Field[];
  /** Column holding the document's type (job_types): its workflow is the document's, and transitions may be limited to it. */
  typeColumn?: string;
  /** Column holding the department, the DepartmentId of StageUpdated. */
  departmentColumn?: string;
  /** Defaults and cross-field rules before the row is written. */
  prepare?: (a: WriteHookArgs) => Promise<void>;
  /** Work after the row is written (team assignments of owner/manager, with their own TeamAdded/TeamRemoved events). */
  finish?: (a: WriteHookArgs & { id: string }) => Promise<void>;
  /** Answer properties that are not columns (ProjectOwnerId…). */
  view?: (trx: Trx, row: Row) => Promise<Row>;
  /** SQL of the workflow a new document takes before its type's and the default one (an expense sheet: its department's), null for none. */
  workflow?: (values: Row) => RawBuilder<unknown>;
  /** The table has no workflow (no stage_id): an expense item. */
  stageless?: boolean;
  /** A type written by a writer of its own (no number, workflow or folder): creates the document and answers its id. */
  create?: (trx: Trx, actor: Principal, model: Row, path: string) => Promise<string>;
  /** The model's schema where its own routes define it already (posts' Actions.Document take the same one). */
  model?: TSchema;
}

const key = (name: string): string => name.trim().toLowerCase();

/**
 * The document types of the Client API, found by any of their names (type, class, full class name, aliases,
 * without regard to case). One is built from the list in ../document-type-list.ts and passed to the routes
 * and services that look a type up by name.
 */
export class DocumentTypes {
  readonly #byName = new Map<string, DocumentDef>();
  readonly #all: readonly DocumentDef[];

  constructor(defs: readonly DocumentDef[]) {
    for (const def of defs) {
      for (const name of [def.type, def.className, fullTypeName(def.className), ...def.aliases]) {
        const k = key(name);
        const known = this.#byName.get(k);
        if (known && known !== def) throw new Error(`document type name ${name} is listed twice`);
        this.#byName.set(k, def);
      }
    }
    this.#all = [...new Set(defs)];
  }

  all(): DocumentDef[] {
    return [...this.#all];
  }

  find(name: string): DocumentDef | undefined {
    return this.#byName.get(key(name));
  }

  /** The type by any of its names; a 422 naming the property otherwise. */
  get(name: string, path: string): DocumentDef {
    const def = this.find(name);
    if (!def) {
      const valid = this.#all.map((d) => d.type);
      throw new HttpProblem(422, `${path.split('/').pop()} "${name}" is not a document type of the Client API (${valid.join(', ')}).`, {
        errors: [{ path, message: 'unknown document type' }],
        extra: { validDocumentTypes: valid },
      });
    }
    return def;
  }
}

/**
 * The Write roles of every document type: a route shared by all of them (assignments, briefs, custom field
 * values, file links) needs one of these before its handler checks the document's own type (issue 26, item 11).
 */
export const DOCUMENT_WRITE_ROLES: RoleName[] = ['ProjectWrite', 'JobWrite', 'ContractWrite', 'RequestWrite', 'EstimateWrite', 'ExpenseWrite'];
/** Every Read and Write role of a document type: what a shared route that reads (or comments) needs first. */
export const DOCUMENT_ROLES: RoleName[] = ['ProjectRead', 'JobRead', 'ContractRead', 'RequestRead', 'EstimateRead', 'ExpenseRead', ...DOCUMENT_WRITE_ROLES];

/**
 * A document type's definition, its fields checked against its table's columns (the generated Database
 * interface): a field naming a column its table lacks fails to compile. The registry holds them untyped by table.
 */
export const defineDocument = <T extends TableName>(def: Omit<DocumentDef, 'table' | 'fields'> & { table: T; fields: Field<T>[] }): DocumentDef => def;
