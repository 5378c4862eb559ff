// The error every layer throws: a status, a detail, field errors and the headers the answer needs.
// Services throw it without knowing HTTP; src/platform/http/errors.ts turns it into problem+json.

export interface FieldError {
  /** JSON path of the offending value, e.g. `/queryBuilder/filters/0`. */
  path: string;
  message: string;
}

/** A detail is one readable sentence or a few; longer ones (a joined list of errors) are cut here. */
export const MAX_DETAIL_CHARS = 4000;

/** An answer lists at most this many field errors; `errorCount` then says how many there were (issue 26, item 1). */
export const MAX_FIELD_ERRORS = 50;

/**
 * A list of field errors that keeps the first MAX_FIELD_ERRORS and counts the rest, for validations that
 * walk a request of any size: what a request can hold is bounded by the body limit, not the errors it causes.
 */
export class FieldErrorList extends Array<FieldError> {
  total = 0;
  static get [Symbol.species]() {
    return Array;
  }
  override push(...items: FieldError[]): number {
    for (const item of items) {
      this.total++;
      if (this.length < MAX_FIELD_ERRORS) super.push(item);
    }
    return this.length;
  }
}

/** " (and N more errors not listed)" when a FieldErrorList dropped some, else "": for a detail that joins the list. */
export const moreErrors = (errors: FieldError[]): string =>
  errors instanceof FieldErrorList && errors.total > errors.length ? ` (and ${errors.total - errors.length} more errors not listed)` : '';

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
    super(detail.length > MAX_DETAIL_CHARS ? `${detail.slice(0, MAX_DETAIL_CHARS)}…` : detail);
    this.status = status;
    this.extra = opts.extra ?? {};
    const errors = opts.errors;
    const total = errors instanceof FieldErrorList ? errors.total : (errors?.length ?? 0);
    this.errors = errors && (errors.length > MAX_FIELD_ERRORS || errors instanceof FieldErrorList) ? [...errors.slice(0, MAX_FIELD_ERRORS)] : errors;
    if (total > MAX_FIELD_ERRORS) this.extra.errorCount = total;
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

/**
 * A run that cannot go on, whatever it is the run of (an automation's: a limit, a broken definition; a
 * scheduled extraction's: nobody left to run it as): its message is the reason its run record shows.
 */
export class RunFailure extends Error {}
