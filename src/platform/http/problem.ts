// RFC 9457 problem details: the one shape of every error Atrium answers.
import { Type } from 'typebox';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export interface FieldError {
  /** JSON path of the offending value, e.g. `/queryBuilder/filters/0`. */
  path: string;
  message: string;
}

export class HttpProblem extends Error {
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    detail: string,
    opts: { errors?: FieldError[]; extra?: Record<string, unknown>; headers?: Record<string, string>; title?: string } = {},
  ) {
    super(detail);
    this.status = status;
    this.errors = opts.errors;
    this.extra = opts.extra ?? {};
    this.headers = opts.headers ?? {};
    if (opts.title) this.extra.title = opts.title;
  }
}

export const titleFor = (status: number): string => TITLES[status] ?? 'Error';

export const typeFor = (status: number): string => `https://atrium.dev/problems/${status}`;

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    instance: Type.String(),
    traceId: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem details' },
);

export const badRequest = (detail: string, errors?: FieldError[]): HttpProblem => new HttpProblem(400, detail, { errors });
export const notFound = (detail: string): HttpProblem => new HttpProblem(404, detail);
export const forbidden = (role: string): HttpProblem => new HttpProblem(403, `This operation requires the role ${role}.`, { extra: { requiredRole: role } });
