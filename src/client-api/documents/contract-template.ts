// GET /api/contracts/{id}/projects/new: a project model filled from a contract (client, company, brand,
// product, dates, currency) and the tenant's defaults (business object type, department of the acting
// user, custom fields), ready to send back as a project's CreateModel. Nothing is written.
import { sql } from 'kysely';
import type { Principal } from '../../platform/auth/principal.ts';
import type { Trx } from '../../platform/db/database.ts';
import { userFieldListOf } from '../collaboration/user-fields.ts';
import { requireRead } from './access.ts';
import { contract, project } from './document-types.ts';
import { loadDocument } from './documents.ts';
import type { Row } from './registry.ts';

export async function contractProjectTemplate(trx: Trx, actor: Principal, contractId: string): Promise<Row> {
  requireRead(actor, contract);
  const c = (await loadDocument(trx, contract, contractId, false)).row;
  const { rows } = await sql<{ currency_id: string | null; department_id: string | null; bot_id: string | null }>`
    select (select currency_id from companies where id = ${c.company_id}) as currency_id,
           (select u.department_id from users u join departments d on d.tenant_id = u.tenant_id and d.id = u.department_id and d.company_id = ${c.company_id}
             where u.id = ${actor.userId}) as department_id,
           (select b.id from business_object_types b join document_types dt on dt.tenant_id = b.tenant_id and dt.id = b.document_type_id
             where dt.class_name = 'Project' order by b.is_default desc, b.name limit 1) as bot_id`.execute(trx);
  const d = rows[0];
  const today = new Date().toISOString().slice(0, 10);
  const fields = await userFieldListOf(trx, actor.tenantId, project, '00000000-0000-0000-0000-000000000000');
  return {
    Name: c.name,
    ContractId: c.id,
    CompanyId: c.company_id,
    ClientId: c.commercial_client_id,
    BrandId: c.brand_id ?? null,
    ProductId: c.product_id ?? null,
    DepartmentId: d.department_id,
    CurrencyId: c.currency_id ?? d.currency_id,
    JobTypeId: null,
    JobClassificationId: null,
    BusinessObjectTypeId: d.bot_id,
    EntryDate: today,
    AgreedDate: c.end_date ?? null,
    RequestedDate: null,
    BeginDateUtc: c.start_date ?? today,
    EndDateUtc: c.end_date ?? null,
    Investment: 0,
    IsDraft: true,
    Plannable: true,
    Priority: 0,
    Effort: null,
    BusinessValue: null,
    AllowsTimesheet: true,
    IsDeliverable: false,
    IsActivated: true,
    MarketId: null,
    ProjectType: 1,
    DocumentUserFieldValues: Object.fromEntries(fields.map((f) => [f.ColumnName, null])),
  };
}
