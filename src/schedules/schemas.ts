// The body a schedule is saved with (POST and PUT), and its type as the schema admits it: the routes
// validate with the one, the service takes the other.
import { type Static, Type } from 'typebox';
import { QueryBuilder, Scalar } from '../extraction/service.ts';
import { named } from '../platform/http/openapi.ts';
import { nullable } from '../platform/http/schemas.ts';
import { FORMATS } from './service.ts';

export const ScheduleBody = named(
  'ScheduleBody',
  Type.Object(
    {
      Name: Type.String({ minLength: 1, maxLength: 200 }),
      Query: Type.String({ minLength: 1, maxLength: 200, description: 'A named query of the catalogue (or an alias), or CT-{tableName}.' }),
      Format: Type.String({ minLength: 1, maxLength: 10, description: `${FORMATS.join(', ')}; a leading dot (".csv") is accepted.` }),
      CronExpression: Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Five fields (minute hour day-of-month month day-of-week), UTC: "5 0 * * *" is 00:05 UTC every day.',
      }),
      Active: Type.Optional(Type.Boolean({ description: 'Default true.' })),
      Bom: Type.Optional(Type.Boolean({ description: 'CSV: start the file with a UTF-8 byte order mark, so Excel reads accents. Default false.' })),
      ExcelSafe: Type.Optional(
        Type.Boolean({
          description: 'CSV: prefix text cells starting with = + - @ (or tab, CR) with a single quote, against formula injection. Default false.',
        }),
      ),
      queryBuilder: Type.Optional(nullable(QueryBuilder)),
      parameters: Type.Optional(nullable(Type.Record(Type.String(), Scalar))),
    },
    { additionalProperties: false },
  ),
);

export type ScheduleInput = Static<typeof ScheduleBody>;
