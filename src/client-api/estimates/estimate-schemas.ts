// TypeBox shapes of the estimate bodies and answers (older published model names; designed where unpublished).
import { type Static, type TSchema, Type } from 'typebox';
import { nullable } from '../../domain/fields.ts';
import { named } from '../../platform/http/openapi.ts';
import { Guid } from '../../platform/http/schemas.ts';

const Id = Type.String({ format: 'uuid' });
const OptId = (description?: string) => Type.Optional(nullable(Type.String({ format: 'uuid', ...(description ? { description } : {}) })));
/** A number within its column (numeric(p,4)): a larger one is a 400 naming the field, not a database overflow. */
const Bounded = (limit: number, description?: string) =>
  Type.Optional(nullable(Type.Number({ exclusiveMinimum: -limit, exclusiveMaximum: limit, ...(description ? { description } : {}) })));
/** Money: numeric(19,4). */
const Num = (description?: string) => Bounded(1e15, description);
/** Quantities and hours: numeric(12,4). */
const Qty = (description?: string) => Bounded(1e8, description);
/** Percentages: numeric(9,4). */
const Pct = (description?: string) => Bounded(1e5, description);
const Bool = Type.Optional(nullable(Type.Boolean()));
const Text = Type.Optional(nullable(Type.String({ maxLength: 4000 })));
const Amount = Type.Number();

export const EstimateItemModel = named(
  'EstimateItemModel',
  Type.Object(
    {
      Id: OptId('One of the estimate’s items to change (its details stay); without it the item is new'),
      Order: Type.Optional(nullable(Type.Integer())),
      Name: Text,
      Description: Text,
      VatId: OptId('VAT on the item’s income'),
      ArticleId: OptId('The article (service)'),
      Retainer: Bool,
      Approved: Bool,
      Billed: Bool,
      AgencyCommissionPercentage: Pct('Percent of quantity × unit price on the income side'),
      QuantityIncome: Qty(),
      UnitPriceIncome: Num(),
      QuantityCost: Qty(),
      UnitPriceCost: Num(),
      ClientDirectValue: Num('Paid by the client directly to third parties (not agency income)'),
    },
    { additionalProperties: false },
  ),
);

/** One item of PUT …/items, as the schema admits it. */
export type ItemInput = Static<typeof EstimateItemModel>;

export const EstimateItemsBody = named('EstimateItemsBody', Type.Array(EstimateItemModel, { maxItems: 2000 }));

export const EstimateDetailBody = named(
  'EstimateDetailBody',
  Type.Object(
    {
      EstimateItemId: Guid,
      Description: Text,
      SupplierId: OptId('Third parties: the supplier'),
      ArticleId: OptId(),
      DepartmentId: OptId('Resources: the department'),
      TypologyId: OptId('Resources: a typology (its group and department apply)'),
      TypologyGroupId: OptId(),
      UserId: OptId('Resources: a user'),
      VatCostId: OptId('VAT on the cost side'),
      Hours: Qty('Resources: hours on both sides unless quantities are sent'),
      QuantityIncome: Qty(),
      UnitPriceIncome: Num('Resources: default the rate card’s rate'),
      DiscountIncome: Num(),
      QuantityCost: Qty(),
      UnitPriceCost: Num(),
      DiscountCost: Num(),
    },
    { additionalProperties: false },
  ),
);

/** A quote line of POST …/details/{side}, as the schema admits it. */
export type DetailInput = Static<typeof EstimateDetailBody>;

export const EstimateDetailAnswer = named(
  'EstimateDetailCreated',
  Type.Object({ Id, EstimateId: Id, TableRate: nullable(Type.Number({ description: 'The rate card’s rate found for a resource' })) }),
);

const conditionProps = {
  Type: Type.Optional(nullable(Type.Integer({ description: 'Condition type (platform enumeration)' }))),
  Frequency: Type.Optional(nullable(Type.Integer())),
  AmountType: Type.Optional(nullable(Type.Integer({ minimum: 0, maximum: 1, description: '0 Percentage, 1 Value' }))),
  Percentage: Pct(),
  Value: Num(),
  YourReference: Text,
  Date: Type.Optional(nullable(Type.String({ format: 'date' }))),
  DayOfMonth: Type.Optional(nullable(Type.Integer({ minimum: 1, maximum: 31 }))),
  DayOfWeek: Type.Optional(nullable(Type.Integer({ minimum: 0, maximum: 6 }))),
  BillingClientId: OptId(),
  PaymentConditionId: OptId(),
};

export const BillingConditionModel = named('BillingConditionModel', Type.Object({ EstimateId: Guid, ...conditionProps }, { additionalProperties: false }));
/** One billing condition of POST /api/billing-conditions, as the schema admits it. */
export type BillingConditionInput = Static<typeof BillingConditionModel>;

export const BillingConditionsBody = named(
  'BillingConditionsBody',
  Type.Union([BillingConditionModel, Type.Array(BillingConditionModel, { minItems: 1, maxItems: 500 })]),
);

const condition = Type.Object({
  Id,
  EstimateId: Type.Optional(Id),
  BillingClientId: nullable(Id),
  PaymentConditionId: nullable(Id),
  Type: Type.Integer(),
  Frequency: Type.Integer(),
  AmountType: Type.Integer(),
  Percentage: nullable(Amount),
  Value: nullable(Amount),
  YourReference: nullable(Type.String()),
  Date: nullable(Type.String({ format: 'date' })),
  DayOfMonth: nullable(Type.Integer()),
  DayOfWeek: nullable(Type.Integer()),
});
export const BillingCondition = named('BillingCondition', condition);

const amountNames = [
  'ValueWithoutVatIncome',
  'VatValueIncome',
  'ValueWithVatIncome',
  'ValueWithoutVatCost',
  'VatValueCost',
  'ValueWithVatCost',
  'CompanyValueWithoutVatIncome',
  'CompanyVatValueIncome',
  'CompanyValueWithVatIncome',
  'CompanyValueWithoutVatCost',
  'CompanyVatValueCost',
  'CompanyValueWithVatCost',
];
const amounts: Record<string, TSchema> = Object.fromEntries(amountNames.map((n) => [n, Amount]));

const detail = Type.Object({
  Id,
  EstimateItemId: Id,
  DetailType: Type.Integer({ description: '0 Resource, 1 ThirdParty, 2 Expense' }),
  DetailTypeName: Type.String(),
  Description: nullable(Type.String()),
  SupplierId: nullable(Id),
  ArticleId: nullable(Id),
  DepartmentId: nullable(Id),
  TypologyGroupId: nullable(Id),
  UserId: nullable(Id),
  VatCostId: nullable(Id),
  QuantityIncome: Amount,
  UnitPriceIncome: Amount,
  DiscountIncome: Amount,
  QuantityCost: Amount,
  UnitPriceCost: Amount,
  DiscountCost: Amount,
  AgencyCommissionValue: Amount,
  TableRate: nullable(Amount),
});

const item = Type.Object({
  Id,
  EstimateId: Id,
  Order: Type.Integer(),
  Name: Type.String(),
  Description: nullable(Type.String()),
  VatId: nullable(Id),
  ArticleId: nullable(Id),
  Retainer: Type.Boolean(),
  Approved: Type.Boolean(),
  Billed: Type.Boolean(),
  AgencyCommissionPercentage: Amount,
  ClientDirectValue: Amount,
  QuantityIncome: Amount,
  UnitPriceIncome: Amount,
  QuantityCost: Amount,
  UnitPriceCost: Amount,
  AgencyCommissionValue: Amount,
  Details: Type.Array(detail),
  ...amounts,
});

const EstimateTotals = named(
  'EstimateTotals',
  Type.Object(
    { ...amounts, Exchange: Amount },
    { description: 'In the estimate’s currency, and (Company…) times Exchange rounded to cents: the money rule of DE-Estimates' },
  ),
);

export const EstimateExtraView: Record<string, TSchema> = {
  Items: Type.Array(named('EstimateItem', item)),
  Totals: EstimateTotals,
  BillingConditions: Type.Array(BillingCondition),
};

/** What PUT …/items answers (decision 0037): the items' ids in the order sent and the new totals, nothing read back item by item. */
export const EstimateItemsAnswer = named(
  'EstimateItemsAnswer',
  Type.Object({
    Id: Type.String({ format: 'uuid', description: 'The estimate' }),
    Items: Type.Array(Type.Object({ Id, Order: Type.Integer(), Name: Type.String() }), { description: 'The estimate’s items, in the order sent' }),
    Totals: EstimateTotals,
  }),
);
