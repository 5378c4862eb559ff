// SCIM /Bulk (RFC 7644 §3.7): operations run in order, each in its own transaction (a failed one leaves
// nothing behind and the others stand), until failOnErrors errors have happened. "bulkId:x" in an
// operation's data or path stands for the id of the resource an earlier operation created with bulkId x.
import { scimError } from './errors.ts';
import { BULK_REQUEST, BULK_RESPONSE, LIMITS } from './schemas.ts';

export type BulkMethod = 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface BulkOperation {
  method: BulkMethod;
  bulkId: string | null;
  path: string;
  version: string | null;
  data: unknown;
}

export interface BulkResult {
  status: number;
  location?: string;
  version?: string;
  /** The created resource's id, for later bulkId references. */
  id?: string;
  /** The SCIM error of a failed operation. */
  response?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export function readBulk(body: unknown): { failOnErrors: number | null; operations: BulkOperation[] } {
  if (!isObject(body)) throw scimError(400, 'invalidSyntax', 'The body must be a BulkRequest object.');
  if (!Array.isArray(body.schemas) || !body.schemas.some((s) => typeof s === 'string' && s.toLowerCase() === BULK_REQUEST.toLowerCase())) {
    throw scimError(400, 'invalidSyntax', `schemas must contain ${BULK_REQUEST}.`);
  }
  const ops = body.Operations ?? body.operations;
  if (!Array.isArray(ops)) throw scimError(400, 'invalidSyntax', 'Operations must be an array.');
  if (ops.length > LIMITS.bulkMaxOperations) throw scimError(413, null, `At most ${LIMITS.bulkMaxOperations} operations per bulk request (maxOperations).`);
  let failOnErrors: number | null = null;
  if (body.failOnErrors !== undefined && body.failOnErrors !== null) {
    if (!Number.isInteger(body.failOnErrors) || (body.failOnErrors as number) < 1)
      throw scimError(400, 'invalidValue', 'failOnErrors must be an integer of at least 1.');
    failOnErrors = body.failOnErrors as number;
  }
  const seen = new Set<string>();
  const operations = ops.map((o, i): BulkOperation => {
    if (!isObject(o)) throw scimError(400, 'invalidSyntax', `Operations[${i}] must be an object.`);
    const method = typeof o.method === 'string' ? o.method.toUpperCase() : '';
    if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(method))
      throw scimError(400, 'invalidSyntax', `Operations[${i}].method must be POST, PUT, PATCH or DELETE.`);
    if (typeof o.path !== 'string' || !/^\/(Users|Groups)(\/[^/?#]{1,200})?$/i.test(o.path)) {
      throw scimError(400, 'invalidPath', `Operations[${i}].path must be /Users, /Groups or one of theirs.`);
    }
    const bulkId = o.bulkId === undefined || o.bulkId === null ? null : String(o.bulkId);
    if (method === 'POST' && !bulkId) throw scimError(400, 'invalidSyntax', `Operations[${i}]: a POST needs a bulkId.`);
    if (bulkId) {
      if (bulkId.length > 200 || seen.has(bulkId)) throw scimError(400, 'invalidValue', `Operations[${i}].bulkId "${bulkId}" is too long or repeated.`);
      seen.add(bulkId);
    }
    const hasId = /^\/(Users|Groups)\/.+/i.test(o.path);
    if ((method === 'POST') === hasId)
      throw scimError(400, 'invalidPath', `Operations[${i}]: ${method} ${o.path} is not an operation on a resource type or resource.`);
    return { method: method as BulkMethod, bulkId, path: o.path, version: typeof o.version === 'string' ? o.version : null, data: o.data };
  });
  return { failOnErrors, operations };
}

/** Replaces "bulkId:x" strings by the ids created so far; an unknown one is a failure of that operation. */
export function resolveBulkIds<T>(value: T, ids: Map<string, string>): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string' && v.startsWith('bulkId:')) {
      const id = ids.get(v.slice('bulkId:'.length));
      if (!id) throw scimError(409, 'invalidValue', `${v} refers to no resource created earlier in this request.`);
      return id;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}

/**
 * Runs the operations in order. `deadline` (epoch ms) is when the request must answer: operations not started
 * by then are left out of the response (none of them ran), so nothing is written after the client was answered.
 */
export async function runBulk(
  request: { failOnErrors: number | null; operations: BulkOperation[] },
  run: (op: BulkOperation) => Promise<BulkResult>,
  errorOf: (err: unknown) => { status: number; body: unknown },
  deadline = Number.POSITIVE_INFINITY,
): Promise<Record<string, unknown>> {
  const ids = new Map<string, string>();
  const results: Record<string, unknown>[] = [];
  let errors = 0;
  for (const op of request.operations) {
    if (request.failOnErrors !== null && errors >= request.failOnErrors) break;
    if (Date.now() > deadline) break;
    let result: BulkResult;
    try {
      const m = /^(\/(?:Users|Groups)\/)(bulkId:.+)$/i.exec(op.path);
      const resolved = { ...op, path: m ? m[1] + resolveBulkIds(m[2], ids) : op.path, data: resolveBulkIds(op.data, ids) };
      result = await run(resolved);
      if (op.bulkId && result.id) ids.set(op.bulkId, result.id);
    } catch (err) {
      const e = errorOf(err);
      result = { status: e.status, response: e.body };
      errors++;
    }
    results.push({
      method: op.method,
      ...(op.bulkId ? { bulkId: op.bulkId } : {}),
      ...(result.location ? { location: result.location } : {}),
      ...(result.version ? { version: result.version } : {}),
      status: String(result.status),
      ...(result.response ? { response: result.response } : {}),
    });
  }
  return { schemas: [BULK_RESPONSE], Operations: results };
}
