// The OData v4 model of the named queries: entity set names derived from query names (DE-Jobs ->
// DE_Jobs, CT-Rates -> CT_Rates), EDM types of the catalogue's data types, and the CSDL document.
import type { ColumnType } from '../definition.ts';
import type { ResolvedQuery } from '../query/resolve.ts';

export const NAMESPACE = 'Atrium';

const EDM: Record<ColumnType, string> = {
  string: 'Edm.String',
  guid: 'Edm.Guid',
  decimal: 'Edm.Decimal',
  integer: 'Edm.Int64',
  boolean: 'Edm.Boolean',
  date: 'Edm.Date',
  datetime: 'Edm.DateTimeOffset',
  object: 'Edm.String',
};

/** An OData SimpleIdentifier for any name. */
export function odataName(name: string): string {
  const s = name.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[A-Za-z_]/.test(s) ? s : `_${s}`;
}

export interface EntityModel {
  entitySet: string;
  query: ResolvedQuery;
  /** property name -> column name, in column order. */
  properties: { property: string; column: string; type: ColumnType }[];
  key: string[];
}

export function entityModel(q: ResolvedQuery): EntityModel {
  const used = new Set<string>();
  const properties = q.columns.map((c) => {
    let property = odataName(c.name);
    while (used.has(property)) property += '_';
    used.add(property);
    return { property, column: c.name, type: c.type };
  });
  const byColumn = new Map(properties.map((p) => [p.column, p.property]));
  // Hidden key columns (EstimatedPlannedActualMonthly's quote line, department and group ids) are not properties of
  // the entity, so the OData key names the answered ones only.
  const key = q.isCount ? ['Count'] : q.key.flatMap((k) => byColumn.get(k) ?? []);
  return { entitySet: odataName(q.name), query: q, properties, key };
}

/** The helper queries (row counts, deleted-row lists) stay out of the service document, so navigators list the data. */
export const isHelperQuery = (model: EntityModel): boolean => model.query.isCount || /Deleted$/.test(model.query.name);

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function csdl(models: EntityModel[]): string {
  const types = models.map((m) => {
    const keys = new Set(m.key);
    const props = m.properties
      .map((p) => `<Property Name="${xml(p.property)}" Type="${EDM[p.type]}"${keys.has(p.property) ? ' Nullable="false"' : ''}/>`)
      .join('');
    return `<EntityType Name="${xml(m.entitySet)}"><Key>${m.key.map((k) => `<PropertyRef Name="${xml(k)}"/>`).join('')}</Key>${props}</EntityType>`;
  });
  const sets = models.map(
    (m) =>
      `<EntitySet Name="${xml(m.entitySet)}" EntityType="${NAMESPACE}.${xml(m.entitySet)}"${isHelperQuery(m) ? ' IncludeInServiceDocument="false"' : ''}/>`,
  );
  return (
    '<?xml version="1.0" encoding="utf-8"?>' +
    '<edmx:Edmx Version="4.0" xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx"><edmx:DataServices>' +
    `<Schema Namespace="${NAMESPACE}" xmlns="http://docs.oasis-open.org/odata/ns/edm">${types.join('')}` +
    `<EntityContainer Name="Container">${sets.join('')}</EntityContainer></Schema>` +
    '</edmx:DataServices></edmx:Edmx>'
  );
}
