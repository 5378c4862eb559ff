// The HTTP side of tracing (decision 0048): a SERVER span per request, continuing an incoming W3C
// traceparent/tracestate, active for everything the request does. It is opened where Node hands the
// request over (Fastify's serverFactory), so the route's hooks, handler and database work all run inside it;
// the route template, the tenant and the status are set on it as they become known. No URL, query or header
// is recorded: the route template names the request, and secrets travel in headers and queries.
import http from 'node:http';
import { type Context, context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { FastifyRequest, FastifyServerOptions } from 'fastify';
import { extractFromHeaders, startSpan } from '../tracing.ts';

const SPAN = Symbol('atrium.span');
type Traced = http.IncomingMessage & { [SPAN]?: Span };

/** Fastify's serverFactory for a traced process: its own http.Server set up as Fastify sets up its own. */
export function tracedServerFactory(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  options: FastifyServerOptions & { http?: http.ServerOptions },
): http.Server {
  const server = http.createServer(options.http ?? {}, (req: Traced, res) => {
    const parent: Context = extractFromHeaders(req.headers);
    const span = startSpan(req.method ?? 'HTTP', {
      kind: SpanKind.SERVER,
      parent,
      attributes: { 'http.request.method': req.method ?? '', 'network.protocol.version': req.httpVersion },
    });
    if (!span) return handler(req, res);
    req[SPAN] = span;
    res.once('close', () => {
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      if (!res.writableFinished) span.setAttribute('atrium.http.aborted', true);
      span.end();
    });
    context.with(trace.setSpan(parent, span), handler, undefined, req, res);
  });
  if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
  if (options.requestTimeout !== undefined) server.requestTimeout = options.requestTimeout;
  server.setTimeout(options.connectionTimeout ?? 0);
  if (options.maxRequestsPerSocket) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
  return server;
}

/** The request's span (undefined when tracing is off, or for inject() calls that bypass the server). */
export const requestSpan = (request: FastifyRequest): Span | undefined => (request.raw as Traced)[SPAN];

/** Names the span after the route template ("GET /api/users/:id"): bounded, and free of ids and values. */
export function annotateRoute(request: FastifyRequest, route: string): void {
  const span = requestSpan(request);
  if (!span) return;
  span.updateName(`${request.method} ${route}`);
  span.setAttribute('http.route', route);
}

export function annotateTenant(request: FastifyRequest, tenantId: string | undefined): void {
  if (tenantId) requestSpan(request)?.setAttribute('atrium.tenant.id', tenantId);
}

/** The request span's ids for its log line. */
export function requestTraceIds(request: FastifyRequest): { traceId?: string; spanId?: string } {
  const sc = requestSpan(request)?.spanContext();
  return sc ? { traceId: sc.traceId, spanId: sc.spanId } : {};
}

/** A problem answer's traceId: the trace's id when traced, else the request id (x-request-id). */
export function traceIdFor(request: FastifyRequest): string {
  return requestSpan(request)?.spanContext().traceId ?? String(request.id);
}
