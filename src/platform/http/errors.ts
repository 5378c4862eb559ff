// Maps every failure (ours, Fastify's, PostgreSQL's) to a problem+json answer; nothing escapes as a bare 500.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type FieldError, HttpProblem, MAX_FIELD_ERRORS } from '../errors.ts';
import { PARTIAL_ERRORS } from './bounded-validation.ts';
import { titleFor, typeFor } from './problem.ts';
import { traceIdFor } from './tracing.ts';

interface PgError extends Error {
  code?: string;
  detail?: string;
  constraint?: string;
  column?: string;
}

const PG_BAD_INPUT = new Set(['22P02', '22007', '22008', '22003', '22001', '22023', '22004', '22018', '2201E', '22012']);

export function toProblem(error: unknown, request: FastifyRequest, timeoutAdvice?: string): HttpProblem {
  if (error instanceof HttpProblem) return error;
  const err = error as FastifyError & PgError;
  if (Array.isArray(err.validation)) {
    const where = err.validationContext ?? 'body';
    const partial = (err.validation as unknown as Record<symbol, unknown>)[PARTIAL_ERRORS] === true;
    const issues = withoutBranchNoise(err.validation);
    const total = issues.length;
    const errors: FieldError[] = issues.slice(0, MAX_FIELD_ERRORS).map((v) => {
      const params = (v.params ?? {}) as Record<string, unknown>;
      let path = `/${where}${v.instancePath ?? ''}`;
      if (typeof params.missingProperty === 'string') path += `/${params.missingProperty}`;
      if (typeof params.additionalProperty === 'string') path += `/${params.additionalProperty}`;
      let message = v.message ?? 'is invalid';
      if (typeof params.additionalProperty === 'string') message = `unknown property ${params.additionalProperty}`;
      if (Array.isArray(params.allowedValues)) message += `: ${params.allowedValues.join(', ')}`;
      return { path, message };
    });
    const more =
      total > errors.length
        ? ` (and ${total - errors.length} more errors not listed)`
        : partial
          ? ' (further errors not looked for: the request is too large to list them all)'
          : '';
    const problem = new HttpProblem(400, `The request ${where} is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}${more}`, { errors });
    if (total > errors.length) problem.extra.errorCount = total;
    return problem;
  }
  if (typeof err.code === 'string' && /^[0-9A-Z]{5}$/.test(err.code) && !err.code.startsWith('FST')) {
    if (err.code === '57014') {
      return new HttpProblem(504, timeoutAdvice ?? 'The request did not finish within the execution time limit and was cancelled.');
    }
    if (PG_BAD_INPUT.has(err.code)) return new HttpProblem(400, `Invalid value: ${err.message}`);
    if (err.code === '23505') return new HttpProblem(409, `Conflict with an existing record${err.constraint ? ` (${err.constraint})` : ''}.`);
    if (err.code === '23503') return new HttpProblem(422, `A referenced record does not exist${err.detail ? `: ${err.detail}` : ''}.`);
    if (err.code === '23502') return new HttpProblem(400, `A required value is missing${err.column ? `: ${err.column}` : ''}.`);
    if (err.code === '23514') return new HttpProblem(400, `A value is not allowed${err.constraint ? ` (${err.constraint})` : ''}.`);
    if (err.code === '40001' || err.code === '40P01') return new HttpProblem(409, 'A concurrent change conflicted with this request; retry it.');
    if (err.code === '53300') return new HttpProblem(503, 'The database is busy; retry shortly.', { headers: { 'retry-after': '1' } });
  }
  const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
  if (status >= 400 && status < 500) {
    const detail = err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'The request body is larger than the limit.' : err.message;
    return new HttpProblem(status, detail);
  }
  request.log.error({ err }, 'unhandled error');
  return new HttpProblem(500, 'An unexpected error occurred; it has been logged with this traceId.');
}

type AjvIssue = { instancePath?: string; keyword?: string; message?: string; params?: unknown };

/**
 * The errors that name the cause. A value failing `anyOf: [X, null]` (a nullable field) yields X's errors,
 * "must be null" and "must match a schema in anyOf": the last two only repeat that X failed, so they are
 * dropped when X's own errors are there (at the path or under it), and "or null" is said once beside them.
 */
export function withoutBranchNoise<T extends AjvIssue>(issues: T[]): T[] {
  const at = (v: T) => v.instancePath ?? '';
  const explained = (v: T) => issues.some((o) => o !== v && !isNoise(o) && (at(o) === at(v) || at(o).startsWith(`${at(v)}/`)));
  const isNoise = (v: T) => v.keyword === 'anyOf' || v.keyword === 'oneOf' || (v.keyword === 'type' && (v.params as { type?: unknown })?.type === 'null');
  const nullable = new Set(issues.filter((v) => v.keyword === 'type' && (v.params as { type?: unknown })?.type === 'null').map(at));
  const kept = issues.filter((v) => !(isNoise(v) && explained(v)));
  return kept.map((v) => (v.keyword === 'type' && nullable.has(at(v)) && !isNoise(v) ? { ...v, message: `${v.message} or null` } : v));
}

export function problemBody(problem: HttpProblem, request: FastifyRequest): Record<string, unknown> {
  return {
    type: typeFor(problem.status),
    title: titleFor(problem.status),
    status: problem.status,
    detail: problem.message,
    instance: request.originalUrl.split('?')[0],
    traceId: traceIdFor(request),
    ...(problem.errors ? { errors: problem.errors } : {}),
    ...problem.extra,
  };
}

export function sendProblem(reply: FastifyReply, request: FastifyRequest, problem: HttpProblem): FastifyReply {
  for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
  return reply.code(problem.status).type('application/problem+json').send(problemBody(problem, request));
}
