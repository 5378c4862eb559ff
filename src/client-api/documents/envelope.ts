// The platform's shared request shapes: the create envelope (`OperationType` or its synonym `Type`:
// 0 / "Create" with CreateModel, 1 / "Duplicate" with DuplicateModel, 2 / "CreateMany" with
// CreateManyModel) and value-wrapped PATCH bodies (`{"Name": {"value": …}}`, `Value` accepted).
import { type TSchema, Type } from 'typebox';
import { badRequest } from '../../platform/errors.ts';

export const OPERATIONS = ['Create', 'Duplicate', 'CreateMany'] as const;
export type Operation = (typeof OPERATIONS)[number];

/** Most items one CreateMany may carry (one transaction; a bigger import is several calls). */
export const MAX_CREATE_MANY = 1000;

const OperationSchema = Type.Union([Type.Integer({ minimum: 0, maximum: 2 }), Type.String({ maxLength: 20 })], {
  description: '0 or "Create", 1 or "Duplicate", 2 or "CreateMany" (names in any case)',
});

export function envelopeSchema(model: TSchema, duplicate?: TSchema): TSchema {
  return Type.Object(
    {
      OperationType: Type.Optional(OperationSchema),
      Type: Type.Optional({ ...OperationSchema, description: 'Synonym of OperationType' }),
      CreateModel: Type.Optional(Type.Union([model, Type.Null()])),
      CreateManyModel: Type.Optional(Type.Union([Type.Array(model, { maxItems: MAX_CREATE_MANY }), Type.Null()])),
      ...(duplicate ? { DuplicateModel: Type.Optional(Type.Union([duplicate, Type.Null()])) } : {}),
    },
    { additionalProperties: false },
  );
}

export interface Envelope {
  OperationType?: number | string;
  Type?: number | string;
  CreateModel?: Record<string, unknown> | null;
  CreateManyModel?: Record<string, unknown>[] | null;
  DuplicateModel?: Record<string, unknown> | null;
}

function operationOf(value: number | string | undefined, path: string): Operation | undefined {
  if (value === undefined) return undefined;
  const found =
    typeof value === 'number'
      ? OPERATIONS[value]
      : OPERATIONS.find((o) => o.toLowerCase() === value.trim().toLowerCase() || String(OPERATIONS.indexOf(o)) === value.trim());
  if (!found) throw badRequest(`${path.split('/').pop()} must be 0 (Create), 1 (Duplicate) or 2 (CreateMany).`, [{ path, message: 'unknown operation' }]);
  return found;
}

export interface Opened {
  operation: Operation;
  /** Create and CreateMany: the models with their JSON paths; Duplicate: the DuplicateModel. */
  items: { model: Record<string, unknown>; path: string }[];
}

/** Which operation the envelope asks for and its models; the operation defaults to the one whose model is sent. */
export function openEnvelope(body: Envelope, allowed: readonly Operation[]): Opened {
  const a = operationOf(body.OperationType, '/body/OperationType');
  const b = operationOf(body.Type, '/body/Type');
  if (a && b && a !== b)
    throw badRequest('OperationType and Type disagree; send one.', [{ path: '/body/Type', message: `disagrees with OperationType (${a})` }]);
  const operation = a ?? b ?? (body.CreateManyModel ? 'CreateMany' : body.DuplicateModel ? 'Duplicate' : 'Create');
  const at = body.OperationType !== undefined ? '/body/OperationType' : '/body/Type';
  if (!allowed.includes(operation)) {
    throw badRequest(`${operation} is not offered here (${allowed.join(', ')}).`, [{ path: at, message: `must be ${allowed.join(' or ')}` }]);
  }
  if (operation === 'Create') {
    if (!body.CreateModel) throw badRequest('CreateModel is required for Create.', [{ path: '/body/CreateModel', message: 'is required' }]);
    return { operation, items: [{ model: body.CreateModel, path: '/body/CreateModel' }] };
  }
  if (operation === 'Duplicate') {
    if (!body.DuplicateModel) throw badRequest('DuplicateModel is required for Duplicate.', [{ path: '/body/DuplicateModel', message: 'is required' }]);
    return { operation, items: [{ model: body.DuplicateModel, path: '/body/DuplicateModel' }] };
  }
  if (!body.CreateManyModel?.length) {
    throw badRequest('CreateManyModel must hold at least one item for CreateMany.', [{ path: '/body/CreateManyModel', message: 'must not be empty' }]);
  }
  return { operation, items: body.CreateManyModel.map((model, i) => ({ model, path: `/body/CreateManyModel/${i}` })) };
}

/** The schema of a value-wrapped property. */
export const wrapped = (schema: TSchema): TSchema =>
  Type.Object({ value: schema }, { additionalProperties: false, description: 'The new value, as {"value": …} ("Value" accepted)' });
