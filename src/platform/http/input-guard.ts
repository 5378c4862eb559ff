// Input that no route can store or should try to parse is refused once, here, with a 400 naming the field:
// text PostgreSQL cannot hold (NUL, lone UTF-16 surrogates), JSON nested deeper than any API needs, and
// requests Node or the router reject before a route runs (bad percent-encoding, long paths, huge headers).
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type FieldError, HttpProblem } from '../errors.ts';
import { sendProblem, toProblem } from './errors.ts';
import { titleFor, typeFor } from './problem.ts';

/** Far deeper than any body of the spec needs, far shallower than what overflows a recursive walk of it. */
export const MAX_JSON_DEPTH = 64;

/** Why a string cannot be accepted, or null. */
export function unsafeTextReason(text: string): string | null {
  if (text.includes('\0')) return 'contains a NUL character (\\u0000), which is not allowed';
  if (!text.isWellFormed()) return 'contains a lone UTF-16 surrogate (not valid Unicode text)';
  return null;
}

/** One reference token of a JSON Pointer (RFC 6901): `~` and `/` escaped. */
export const pointerToken = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The first string (value or object key) under `value` that cannot be accepted, as a field error. */
export function findUnsafeText(value: unknown, path: string): FieldError | null {
  // Iterative, and the path is built only for the string that fails: a body of 100,000 values must not
  // cost 100,000 path strings (issue 26). Each frame is a container and the index of its next child.
  const frames: { container: unknown[] | Record<string, unknown>; keys: string[] | null; next: number }[] = [];
  const at = (last: string): string => `${path}${frames.map((f) => `/${f.keys ? pointerToken(f.keys[f.next - 1]) : f.next - 1}`).join('')}${last}`;
  const visit = (v: unknown): FieldError | null => {
    if (typeof v === 'string') {
      const reason = unsafeTextReason(v);
      return reason ? { path: at(''), message: reason } : null;
    }
    if (Array.isArray(v)) frames.push({ container: v, keys: null, next: 0 });
    else if (v !== null && typeof v === 'object' && isPlain(v)) frames.push({ container: v as Record<string, unknown>, keys: Object.keys(v), next: 0 });
    return null;
  };
  const first = visit(value);
  if (first) return first;
  while (frames.length > 0) {
    const frame = frames[frames.length - 1];
    const size = frame.keys ? frame.keys.length : (frame.container as unknown[]).length;
    if (frame.next >= size) {
      frames.pop();
      continue;
    }
    const key = frame.keys ? frame.keys[frame.next] : null;
    frame.next++;
    if (key !== null) {
      const reason = unsafeTextReason(key);
      // The offending characters cannot appear in the answer's path either, so they show as U+FFFD there.
      if (reason) {
        frames.pop();
        return { path: `${at('')}/${pointerToken(key.toWellFormed().replaceAll('\0', '\uFFFD'))}`, message: `property name ${reason}` };
      }
    }
    const child = key !== null ? (frame.container as Record<string, unknown>)[key] : (frame.container as unknown[])[frame.next - 1];
    const error = visit(child);
    if (error) return error;
  }
  return null;
}

/** Data objects (the query and params come with null-ish prototypes), not a streamed body or a Buffer. */
function isPlain(value: object): boolean {
  return !ArrayBuffer.isView(value) && typeof (value as { pipe?: unknown }).pipe !== 'function';
}

/** preValidation: path parameters, query string and a parsed body carry no text PostgreSQL would refuse. */
export async function rejectUnsafeText(request: FastifyRequest): Promise<void> {
  for (const [where, value] of [
    ['params', request.params],
    ['querystring', request.query],
    ['body', request.body],
  ] as const) {
    const error = findUnsafeText(value, `/${where}`);
    if (error) throw new HttpProblem(400, `The request ${where} is invalid: ${error.path} ${error.message}`, { errors: [error] });
  }
}

/** Nesting depth of a JSON text, counted without parsing it; stops counting once past `limit`. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // A string: jump to its closing quote (one not escaped by an odd run of backslashes) with indexOf, so a
      // 10 MB value costs a native search instead of a JavaScript loop over each of its characters.
      let from = i + 1;
      for (;;) {
        const quote = text.indexOf('"', from);
        if (quote < 0) return false; // unterminated: JSON.parse answers it
        let backslashes = 0;
        for (let k = quote - 1; k > i && text.charCodeAt(k) === 92; k--) backslashes++;
        if (backslashes % 2 === 0) {
          i = quote;
          break;
        }
        from = quote + 1;
      }
    } else if (c === 91 || c === 123) {
      if (++depth > limit) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}

type Done = (err: Error | null, body?: unknown) => void;

/** Wraps Fastify's own JSON parser (prototype-poisoning checks, empty-body error) with the depth limit. */
export function depthLimitedJsonParser<R>(parse: (request: R, body: string, done: Done) => void): (request: R, body: string, done: Done) => void {
  return (request, body, done) => {
    // No body with a JSON content type (curl -H 'Content-Type: application/json' -X DELETE …): no body. A route
    // that takes one still answers 400 from its schema; one that takes none is not refused for the header.
    if (body.trim() === '') {
      done(null, undefined);
      return;
    }
    if (jsonDepthExceeds(body, MAX_JSON_DEPTH)) {
      done(
        new HttpProblem(400, `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`, {
          errors: [{ path: '/body', message: 'is nested too deeply' }],
        }),
      );
      return;
    }
    parse(request, body, done);
  };
}

/** Fastify's routing errors (bad percent-encoding, a too-long path parameter) answered like every other error. */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  let problem: HttpProblem;
  if (error.code === 'FST_ERR_BAD_URL')
    problem = new HttpProblem(400, 'The request path is not valid percent-encoded UTF-8.', {
      errors: [{ path: '/params', message: 'malformed percent-encoding' }],
    });
  else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') problem = new HttpProblem(414, 'A path parameter of the request is longer than allowed.');
  else problem = toProblem(error, request);
  sendProblem(reply, request, problem);
}

/**
 * Errors Node's HTTP parser raises before there is a request (header too large, malformed request line):
 * a problem+json answer on the socket, then the connection closes, as Node's own handler would.
 */
export function clientErrorHandler(error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, detail] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'The request headers are larger than the server accepts.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'The request was not received in time.']
        : [400, 'The request is not valid HTTP.'];
  const firstLine = Buffer.isBuffer(error.rawPacket) ? error.rawPacket.toString('latin1').split('\r\n', 1)[0] : '';
  const target = /^[A-Z]+ (\/[!-~]*) HTTP\/1\.[01]$/.exec(firstLine)?.[1]?.split('?')[0] ?? '/';
  const body = JSON.stringify({ type: typeFor(status), title: titleFor(status), status, detail, instance: target, traceId: randomUUID() });
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  // end() lets the answer go out first; a client that keeps sending must not hold the socket open.
  socket.destroySoon();
}
