// SCIM errors (RFC 7644 §3.12): services throw HttpProblem with a scimType; the SCIM routes' error handler
// answers every failure, ours or the Integration API's, in the SCIM error schema and never as a bare 500.
import type { FastifyError, FastifyRequest } from 'fastify';
import { HttpProblem } from '../platform/errors.ts';
import { toProblem } from '../platform/http/errors.ts';

export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive';

export const scimError = (status: number, scimType: ScimType | null, detail: string, headers?: Record<string, string>): HttpProblem =>
  new HttpProblem(status, detail, { extra: scimType ? { scimType } : {}, headers });

export interface ScimErrorBody {
  schemas: string[];
  status: string;
  scimType?: string;
  detail: string;
}

/**
 * Any failure as a SCIM error, after the platform's own mapping (PostgreSQL codes, Fastify's errors, a
 * logged 500). The Integration API's answers are translated: 409 is `uniqueness`, its 422 (a reference
 * that does not resolve, a rule broken) a 400 `invalidValue`, a body the schema refuses `invalidSyntax`.
 */
export function toScimError(error: unknown, request: FastifyRequest): { status: number; body: ScimErrorBody; headers: Record<string, string> } {
  const problem = toProblem(error, request);
  let status = problem.status;
  let scimType = typeof problem.extra.scimType === 'string' ? problem.extra.scimType : undefined;
  const fastify = error as FastifyError;
  if (!scimType) {
    if (status === 409) scimType = 'uniqueness';
    else if (status === 422 || status === 415) {
      status = 400;
      scimType = 'invalidValue';
    } else if (status === 400) scimType = Array.isArray(fastify?.validation) || fastify?.code?.startsWith('FST_') ? 'invalidSyntax' : 'invalidValue';
  }
  const detail = fastify?.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'The request body is larger than maxPayloadSize.' : problem.message;
  return { status, body: { schemas: [ERROR_SCHEMA], status: String(status), ...(scimType ? { scimType } : {}), detail }, headers: problem.headers };
}
