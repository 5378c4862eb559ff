// The transactional outbox: a change appends its events with the same transaction handle it
// writes its rows with, so an event exists exactly when its change committed.
import { type RawBuilder, sql } from 'kysely';
import { executePrepared, type Trx } from '../db/database.ts';
import { fullTypeName } from './catalogue.ts';

export interface NewEvent {
  tenantId: string;
  actionType: string;
  /** Class name (`Deliverable`) or full type name (`Skill.Module.BusinessObjects.Deliverable`). */
  documentType: string;
  documentId?: string | null;
  businessObjectTypeName?: string | null;
  detail?: Record<string, unknown>;
  userId?: string | null;
}

export async function appendEvents(trx: Trx, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  const insert = trx.insertInto('events').values(
    events.map((e) => ({
      tenant_id: e.tenantId,
      action_type: e.actionType,
      document_type: fullTypeName(e.documentType),
      document_id: e.documentId ?? null,
      business_object_type_name: e.businessObjectTypeName ?? null,
      detail: JSON.stringify(e.detail ?? {}),
      user_id: e.userId ?? null,
    })),
  );
  // One event's INSERT has one text whatever it carries: prepared (decision 0061). Batches run as they are.
  if (events.length === 1) await executePrepared(trx, insert);
  else await insert.execute();
}

export const appendEvent = (trx: Trx, event: NewEvent): Promise<void> => appendEvents(trx, [event]);

/** The INSERT of one event as a statement fragment, for a writer that appends it inside its own statement (a CTE). */
export const eventInsert = (e: NewEvent): RawBuilder<unknown> => sql`
  insert into events (tenant_id, action_type, document_type, document_id, business_object_type_name, detail, user_id)
  values (${e.tenantId}, ${e.actionType}, ${fullTypeName(e.documentType)}, ${e.documentId ?? null}, ${e.businessObjectTypeName ?? null},
          ${JSON.stringify(e.detail ?? {})}, ${e.userId ?? null})`;
