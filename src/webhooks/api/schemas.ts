// The body a webhook subscription is created and replaced with, and its type as the schema admits it:
// the routes validate with the one, subscriptions.ts takes the other.
import { type Static, Type } from 'typebox';
import { named } from '../../platform/http/openapi.ts';
import { Guid, nullable } from '../../platform/http/schemas.ts';
import { FILTER_CONDITIONS, GROUP_CONDITIONS } from '../match.ts';

/** One of the strings of `values`, as an enum of literals; its static type is their union. */
export const Literals = <T extends string>(values: readonly T[]) => Type.Unsafe<T>(Type.Union(values.map((v) => Type.Literal(v))));

export const DetailFilterSchema = named(
  'DetailFilter',
  Type.Object(
    {
      groupCondition: Literals(GROUP_CONDITIONS),
      jsonPathExpression: Type.String({ minLength: 1, maxLength: 500, description: 'Property of the event detail: Name, a.b or $.a.b' }),
      condition: Literals(FILTER_CONDITIONS),
      value: Type.String({ maxLength: 4000, description: 'Compared case-insensitively; {{SystemPreferenceName/KeyName}} resolves a system preference' }),
    },
    { additionalProperties: false },
  ),
);

export const SubscriptionBody = named(
  'WebhookSubscriptionBody',
  Type.Object(
    {
      Name: Type.String({ minLength: 1, maxLength: 200 }),
      Description: Type.Optional(nullable(Type.String({ maxLength: 4000 }))),
      ActionType: Type.String({ minLength: 1, maxLength: 200, description: 'An event of the catalogue (Created, Updated, StageUpdated, …) or a custom value' }),
      DocumentType: Type.String({ minLength: 1, maxLength: 400, description: 'Full type name, as GET /api/v3/document-types/lookup lists' }),
      Url: Type.Optional(nullable(Type.String({ maxLength: 2000, description: 'Required unless IsAutomation' }))),
      Secret: Type.Optional(
        nullable(
          Type.String({
            maxLength: 500,
            description:
              'whsec_<base64> (Standard Webhooks) or any text (used as its UTF-8 bytes). Generated when absent; a PUT without it keeps the current one',
          }),
        ),
      ),
      Active: Type.Optional(Type.Boolean({ default: false })),
      IsAutomation: Type.Optional(Type.Boolean({ default: false })),
      AutomationId: Type.Optional(nullable(Guid)),
      BusinessObjectTypeName: Type.Optional(nullable(Type.String({ maxLength: 200 }))),
      DetailFilters: Type.Optional(nullable(Type.Array(DetailFilterSchema, { maxItems: 100 }))),
    },
    { additionalProperties: false, description: 'Property names are matched case-insensitively' },
  ),
);

export type SubscriptionInput = Static<typeof SubscriptionBody>;
