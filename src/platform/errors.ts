// The error every layer throws: a status, a detail, field errors and the headers the answer needs.
// Services throw it without knowing HTTP; src/platform/http/errors.ts turns it into problem+json.

export interface FieldError {
  /** JSON path of the offending value, e.g. `/queryBuilder/filters/0`. */
  path: string;
  message: string;
}

/** RFC 9457 problem details before they are written: `type` and `title` follow from the status. */
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

export const badRequest = (detail: string, errors?: FieldError[]): HttpProblem => new HttpProblem(400, detail, { errors });

/** The same answer for every credential failure, so a caller learns nothing about what exists. */
export const unauthorized = (detail = 'Missing or invalid credentials.'): HttpProblem => new HttpProblem(401, detail);

/** A missing static role: one role names it (requiredRole), several any-of roles list them (requiredRoles). */
export const forbidden = (roles: string | readonly string[]): HttpProblem => {
  const list = typeof roles === 'string' ? [roles] : [...roles];
  return list.length === 1
    ? new HttpProblem(403, `This operation requires the role ${list[0]}.`, { extra: { requiredRole: list[0] } })
    : new HttpProblem(403, `This operation requires one of the roles: ${list.join(', ')}.`, { extra: { requiredRoles: list } });
};

export const notFound = (detail: string): HttpProblem => new HttpProblem(404, detail);

export const conflict = (detail: string, headers?: Record<string, string>): HttpProblem => new HttpProblem(409, detail, { headers });
