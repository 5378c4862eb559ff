// Document briefs (descriptions): every post adds a version, numbered after the document's highest one
// (a race for the same number fails on the unique index and the write is run again). DE-Descriptions
// reads these rows; a new version raises Created on DocumentBrief. Briefs apply to the Client API's
// registered documents and to every other document type of the spec whose records Atrium has (a user's
// description is the platform's "User Description"), named without regard to case by its name, class
// or full name.
import { sql } from 'kysely';
import { hasRole, type Principal } from '../../platform/auth/principal.ts';
import { ADMINISTRATOR } from '../../platform/auth/roles.ts';
import type { Trx } from '../../platform/db/database.ts';
import type { TableName } from '../../platform/db/schema.ts';
import { forbidden, HttpProblem } from '../../platform/errors.ts';
import { DOCUMENT_TYPES, fullTypeName } from '../../platform/events/catalogue.ts';
import { appendEvent } from '../../platform/events/outbox.ts';
import { requireRead } from '../documents/access.ts';
import { documentTypeId } from '../documents/document-type-ids.ts';
import type { DocumentDef, DocumentTypes, Row } from '../documents/registry.ts';

/** Spec document types outside the registry whose records Atrium keeps, by class: their table. Administrator writes and reads their briefs. */
const OTHER_BRIEF_TYPES: Record<string, TableName> = {
  User: 'users',
  Bill: 'bills',
  Brand: 'brands',
  Client: 'billing_clients',
  CommercialClient: 'commercial_clients',
  CommercialClientProduct: 'products',
  PurchaseOrder: 'purchase_orders',
  Timesheet: 'timesheets',
  FileSystemObject: 'files',
  JobType: 'job_types',
  Company: 'companies',
  Supplier: 'suppliers',
  Leave: 'leaves',
};

/** Names (lowercased) -> class of the other types: the class, the display name and the full name. */
const OTHER_BY_NAME = new Map<string, string>();
for (const className of Object.keys(OTHER_BRIEF_TYPES)) {
  const display = DOCUMENT_TYPES.find((d) => d.className === className)?.name;
  for (const n of [className, fullTypeName(className), display]) if (n) OTHER_BY_NAME.set(n.toLowerCase(), className);
}

/** What a brief is written on: a registered document type, or another type by its class and table. */
export type BriefTarget = { def: DocumentDef } | { className: string; table: TableName };

/** The brief target a DocumentTypeName names (any case; short, class or full name); a 422 naming the property otherwise. */
export function briefTarget(types: DocumentTypes, name: string, path: string): BriefTarget {
  const def = types.find(name);
  if (def) return { def };
  const className = OTHER_BY_NAME.get(name.trim().toLowerCase());
  if (className) return { className, table: OTHER_BRIEF_TYPES[className] };
  const valid = [...types.all().map((d) => d.type), ...Object.keys(OTHER_BRIEF_TYPES)];
  throw new HttpProblem(422, `${path.split('/').pop()} "${name}" is not a document type briefs apply to (${valid.join(', ')}).`, {
    errors: [{ path, message: 'unknown document type' }],
    extra: { validDocumentTypes: valid },
  });
}

export interface BriefInput {
  /** HTML. */
  text: string;
  /** The text rendition; derived from the HTML when not sent. */
  plainText?: string | null;
  actions?: unknown;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** A plain rendition of brief HTML: block ends become line breaks, tags go, the common entities are decoded. */
export function plainTextOf(html: string): string {
  return html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|li|h[1-6]|tr)>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, (m, e: string) =>
      e.startsWith('#x')
        ? String.fromCodePoint(Number.parseInt(e.slice(2), 16))
        : e.startsWith('#')
          ? String.fromCodePoint(Number(e.slice(1)))
          : (ENTITIES[e.toLowerCase()] ?? m),
    )
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Adds a version of the document's brief; answers it as the API shows briefs. */
export async function addBrief(trx: Trx, actor: Principal, def: Pick<DocumentDef, 'type' | 'className'>, documentId: string, brief: BriefInput): Promise<Row> {
  const dt = await documentTypeId(trx, actor.tenantId, def.className);
  const plain = brief.plainText ?? plainTextOf(brief.text);
  const { rows } = await sql<{ id: string; version: number; modified_on_utc: Date }>`
    insert into descriptions (tenant_id, document_type_id, document_id, version, text_html, plain_text, created_by_id, modified_by_id)
    values (${actor.tenantId}, ${dt}, ${documentId},
            coalesce((select max(version) from descriptions where document_id = ${documentId}), 0) + 1,
            ${brief.text}, ${plain}, ${actor.userId}, ${actor.userId})
    returning id, version, modified_on_utc`.execute(trx);
  const row = rows[0];
  await appendEvent(trx, {
    tenantId: actor.tenantId,
    actionType: 'Created',
    documentType: 'DocumentBrief',
    documentId: row.id,
    detail: {
      DocumentId: documentId,
      DocumentTypeName: def.type,
      Version: row.version,
      PropertyTypes: { DocumentId: 'Guid', DocumentTypeName: 'String', Version: 'Int32' },
    },
    userId: actor.userId,
  });
  return {
    Id: row.id,
    DocumentId: documentId,
    CreatedById: actor.userId,
    CreatedByName: await userNameOf(trx, actor.userId),
    EditedOn: row.modified_on_utc.toISOString(),
    Text: brief.text,
    PlainText: plain,
    Version: row.version,
    Actions: brief.actions ?? null,
  };
}

export async function userNameOf(trx: Trx, userId: string | null): Promise<string | null> {
  if (!userId) return null;
  const u = await trx.selectFrom('users').select(['name', 'user_name']).where('id', '=', userId).executeTakeFirst();
  return u ? (u.name ?? u.user_name) : null;
}

/** The document's brief versions, newest first (read with its type's Read role when the type is registered). */
export async function briefsOf(trx: Trx, actor: Principal, types: DocumentTypes, documentId: string): Promise<Row[]> {
  const { rows } = await sql<{
    id: string;
    created_by_id: string | null;
    created_by_name: string | null;
    edited_on: Date;
    text_html: string | null;
    plain_text: string | null;
    version: number;
    class_name: string | null;
  }>`
    select d.id, d.created_by_id, coalesce(u.name, u.user_name) as created_by_name, d.modified_on_utc as edited_on, d.text_html, d.plain_text, d.version,
           dt.class_name
      from descriptions d
      left join users u on u.tenant_id = d.tenant_id and u.id = d.created_by_id
      left join document_types dt on dt.tenant_id = d.tenant_id and dt.id = d.document_type_id
     where d.document_id = ${documentId}
     order by d.version desc`.execute(trx);
  const className = rows[0]?.class_name;
  const def = className ? types.find(className) : undefined;
  if (def) requireRead(actor, def);
  else if (className && !hasRole(actor, ADMINISTRATOR)) throw forbidden(ADMINISTRATOR);
  return rows.map((r) => ({
    Id: r.id,
    DocumentId: documentId,
    CreatedById: r.created_by_id,
    CreatedByName: r.created_by_name,
    EditedOn: r.edited_on.toISOString(),
    Text: r.text_html,
    PlainText: r.plain_text,
    Version: r.version,
    Actions: null,
  }));
}
