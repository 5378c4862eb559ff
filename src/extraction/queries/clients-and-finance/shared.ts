// SQL pieces shared by the clients-and-finance named queries: the calling user's per-document flags
// and the document-value expressions, so every query computes them the same way.
import type { RawBuilder } from 'kysely';
import { type QueryContext, sql } from '../../definition.ts';

/** AlreadyRead: the calling user has opened the document (false without an X-AppUser). */
export const alreadyRead = (ctx: QueryContext, documentId: RawBuilder<unknown>): RawBuilder<boolean> =>
  ctx.userId === null
    ? sql<boolean>`false`
    : sql<boolean>`exists (select 1 from document_reads r where r.tenant_id = ${ctx.tenantId} and r.user_id = ${ctx.userId} and r.document_id = ${documentId})`;

/** CurrentUserInTeam: the calling user is on the document's team. */
export const inTeam = (ctx: QueryContext, documentId: RawBuilder<unknown>): RawBuilder<boolean> =>
  ctx.userId === null
    ? sql<boolean>`false`
    : sql<boolean>`exists (select 1 from assignments a where a.tenant_id = ${ctx.tenantId} and a.user_id = ${ctx.userId} and a.document_id = ${documentId})`;

/** CurrentUserPending: an approval of the document waits for the calling user. */
export const pendingApproval = (ctx: QueryContext, documentId: RawBuilder<unknown>): RawBuilder<boolean> =>
  ctx.userId === null
    ? sql<boolean>`false`
    : sql<boolean>`exists (select 1 from approvals ap where ap.tenant_id = ${ctx.tenantId} and ap.approver_id = ${ctx.userId} and ap.document_id = ${documentId} and ap.status = 'Pending')`;

/** CurrentUserInDepartment: the calling user belongs to the given department. */
export const inDepartment = (ctx: QueryContext, departmentId: RawBuilder<unknown>): RawBuilder<boolean> =>
  ctx.userId === null
    ? sql<boolean>`false`
    : sql<boolean>`exists (select 1 from users cu where cu.tenant_id = ${ctx.tenantId} and cu.id = ${ctx.userId} and cu.department_id = ${departmentId})`;

/** The user id to match per-user rows (document_reads, favorites) against: null matches nothing. */
export const callingUser = (ctx: QueryContext): RawBuilder<string | null> => sql`${ctx.userId}::uuid`;

/**
 * VAT of a net amount at a percentage, rounded to cents per line (as on an invoice line), so
 * ValueWithVat = ValueWithoutVat + VatValue holds exactly.
 */
export const lineVat = (net: RawBuilder<unknown>, percentage: RawBuilder<unknown>): RawBuilder<string> =>
  sql`round(${net} * coalesce(${percentage}, 0) / 100, 2)::numeric(19,4)`;

/** Cost of an estimate quote line aliased `dt` (docs/data-model.md): quantity × unit price − discount. */
export const LINE_COST: RawBuilder<string> = sql`round(dt.quantity_cost * dt.unit_price_cost - dt.discount_cost, 4)`;

/** Income of an estimate quote line aliased `dt`: quantity × unit price − discount + agency commission. */
export const LINE_INCOME: RawBuilder<string> = sql`round(dt.quantity_income * dt.unit_price_income - dt.discount_income + dt.agency_commission_value, 4)`;
