// The expense sheet's and expense item's published fields, and the documents an item type's level charges
// an item to: one leaf module that the writer, the schemas and the registered types share.
import type { TableName } from '../../platform/db/schema.ts';
import { type Field, guidField } from '../documents/fields.ts';

export const g = <T extends TableName = any>(name: string, column: Field<T>['column'], required = false): Field<T> => ({
  ...guidField<T>(name, column),
  required,
});

/** The roles of expense sheets and their items (both document types, and the sheet's own routes). */
export const EXPENSE_ROLES = { read: 'ExpenseRead', write: 'ExpenseWrite' } as const;

export const SHEET_FIELDS: Field<'expense_sheets'>[] = [
  g('CompanyId', 'company_id', true),
  g('DepartmentId', 'department_id'),
  g('CurrencyId', 'currency_id'),
  g('PaymentConditionId', 'payment_condition_id'),
  g('SupplierId', 'supplier_id'),
  {
    ...g('EmployeeId', 'user_id'),
    description: 'The employee (DE-Employees EmployeeId) whose expenses these are, or a user id; an id of both is the employee’s (default: the acting user)',
  },
  { name: 'Emission', column: 'emission_date', kind: 'date', required: true },
  { name: 'Due', column: 'due_date', kind: 'date', required: true },
  { name: 'EntryDate', column: 'entry_date', kind: 'date' },
  { name: 'Exchange', column: 'exchange', kind: 'double', notNull: true },
  { name: 'ExternalDocumentType', column: 'external_document_type', kind: 'string' },
  { name: 'DocumentNumber', column: 'document_number', kind: 'string' },
];

/** Levels of an expense item type and the property each one requires. */
export const LEVELS: (Field<'expense_items'> | null)[] = [
  null,
  g('ClientId', 'commercial_client_id'),
  g('ProjectId', 'project_id'),
  g('DeliverableId', 'job_id'),
  g('EstimateId', 'estimate_id'),
  g('ProductId', 'product_id'),
];

export const ITEM_FIELDS: Field<'expense_items'>[] = [
  g('ExpenseItemTypeId', 'expense_type_id', true),
  { name: 'ExpenseItemGroup', column: 'item_group', kind: 'int', description: 'Advanced 0, Order 1, Refund 2 (or the name); required' },
  { name: 'ValueWithoutVat', column: 'value_without_vat', kind: 'double' },
  g('VatId', 'vat_id'),
  { name: 'Number', column: 'number', kind: 'string' },
  { name: 'Status', column: 'status', kind: 'int', notNull: true, description: 'ToApprove 0' },
  { name: 'Paid', column: 'paid', kind: 'bool', notNull: true },
  { name: 'KilometersValue', column: 'kilometers_value', kind: 'double', description: 'Rate per kilometre (default: the mileage type’s value)' },
  { name: 'Kilometers', column: 'kilometers', kind: 'double' },
  { name: 'Destination', column: 'destination', kind: 'string' },
  { name: 'Origin', column: 'origin', kind: 'string' },
  { name: 'Participants', column: 'participants', kind: 'string' },
  { name: 'Vehicle', column: 'vehicle', kind: 'string' },
  { name: 'StartOn', column: 'start_on', kind: 'datetime' },
  { name: 'EndOn', column: 'end_on', kind: 'datetime' },
  g('SupplierId', 'supplier_id'),
  g('DepartmentId', 'department_id'),
  { name: 'Motive', column: 'motive', kind: 'string' },
  { name: 'Date', column: 'date', kind: 'date', description: 'Default: StartOn’s day, else today' },
  ...LEVELS.filter((f) => f !== null),
];
