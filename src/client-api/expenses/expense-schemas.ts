// TypeBox shapes of the expense bodies and answers: POST /api/expenses and …/items take them, and so do
// posts' Actions.Document for Expense and ExpenseItem (expense-type.ts).
import { Type } from 'typebox';
import { named } from '../../platform/http/openapi.ts';
import { Guid } from '../../platform/http/schemas.ts';
import { modelProperties } from '../documents/fields.ts';
import { ITEM_FIELDS, SHEET_FIELDS } from './expense-fields.ts';

export const SheetModel = named(
  'ExpenseModel',
  Type.Object(modelProperties(SHEET_FIELDS), { additionalProperties: false, description: 'Required: CompanyId, Emission, Due.' }),
);
export const ItemModel = named(
  'ExpenseItemModel',
  Type.Object(
    {
      ...modelProperties(ITEM_FIELDS.filter((f) => f.name !== 'ExpenseItemGroup')),
      ExpenseItemGroup: Type.Union([Type.Integer({ minimum: 0, maximum: 2 }), Type.String({ maxLength: 20 })], {
        description: 'Advanced 0, Order 1, Refund 2 (number or name)',
      }),
      ExpenseSheetId: Type.Optional(Guid),
      EmployeeId: Type.Optional(Type.Union([Guid, Type.Null()])),
      ValueWithVat: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
      CountryId: Type.Optional(Type.Union([Guid, Type.Null()])),
      JobTypeId: Type.Optional(Type.Union([Guid, Type.Null()])),
      Correction: Type.Optional(Type.Unknown()),
    },
    {
      additionalProperties: false,
      description:
        'EmployeeId, ValueWithVat, CountryId, JobTypeId and Correction are accepted and not stored (the sheet names the employee; the value with VAT follows from ValueWithoutVat and VatId).',
    },
  ),
);
export const Sheet = named(
  'Expense',
  Type.Object(
    {},
    { additionalProperties: true, description: 'The sheet’s fields, Id, Number, WorkflowId, StageId, Stage, Items, ValueWithoutVat, VatValue, ValueWithVat' },
  ),
);
export const Item = named('ExpenseItem', Type.Object({}, { additionalProperties: true, description: 'The item’s fields with Id and ExpenseSheetId' }));
