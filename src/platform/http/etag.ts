// Conditional GET for documents clients fetch again and again ($metadata, the OpenAPI document, a
// named query's metadata): an ETag from the answer's own bytes, and 304 when the client has them.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Weak, because the same entity may travel gzip- or br-encoded (RFC 9110 8.8.3: a strong tag would
 * have to differ per encoding); If-None-Match compares weakly anyway.
 */
export function etagOf(body: string): string {
  return `W/"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
}

/** RFC 9110 13.1.2: `*` or a list of tags, compared without their W/ prefix. */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag.replace(/^W\//, '') === opaque;
  });
}

/** Sends `body` (a serialized answer; the caller sets its type) with its ETag, or 304 without it. */
export function sendWithEtag(request: FastifyRequest, reply: FastifyReply, body: string): FastifyReply {
  const etag = etagOf(body);
  reply.header('etag', etag);
  if ((request.method === 'GET' || request.method === 'HEAD') && noneMatch(request.headers['if-none-match'], etag)) return reply.code(304).send();
  return reply.send(body);
}

/** An object answered as JSON (as Fastify would serialize it without a response schema), with its ETag. */
export function sendJsonWithEtag(request: FastifyRequest, reply: FastifyReply, value: unknown): FastifyReply {
  reply.type('application/json; charset=utf-8');
  return sendWithEtag(request, reply, JSON.stringify(value));
}
