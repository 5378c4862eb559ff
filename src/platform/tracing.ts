// OpenTelemetry tracing (decision 0048): spans for HTTP requests, database transactions and statements,
// pg-boss jobs, webhook dispatch and delivery attempts, automation runs and actions, exported over
// OTLP/HTTP. Configured by the standard OTEL_* variables and off when none is set: then every helper
// here returns after one boolean test, and no context manager, propagator or provider is registered.
import { type Attributes, type Context, context, type Link, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';

export { type Context, type Span, SpanKind };

/** What the OTEL_* variables ask for; null in Config when tracing is off. */
export interface TracingConfig {
  /** The OTLP/HTTP traces endpoint (…/v1/traces). */
  tracesUrl: string;
  serviceName: string;
  sampler: string;
  samplerArg: number | undefined;
  /** OTEL_RESOURCE_ATTRIBUTES, parsed. */
  resourceAttributes: Record<string, string>;
  /** OTEL_EXPORTER_OTLP_HEADERS / OTEL_EXPORTER_OTLP_TRACES_HEADERS, parsed (e.g. an API key of the backend). */
  headers: Record<string, string>;
}

export const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];

/** Reads the standard variables; null when no endpoint is set, OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. */
export function tracingConfigFrom(env: NodeJS.ProcessEnv, problems: string[]): TracingConfig | null {
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT || '';
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || '';
  if (!base && !traces) return null;
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true') return null;
  const exporter = (env.OTEL_TRACES_EXPORTER || 'otlp').toLowerCase();
  if (exporter === 'none') return null;
  if (exporter !== 'otlp') problems.push(`OTEL_TRACES_EXPORTER must be otlp or none (got "${env.OTEL_TRACES_EXPORTER}")`);
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/json';
  if (protocol !== 'http/json' && protocol !== 'http/protobuf')
    problems.push(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/json or http/protobuf; Atrium sends OTLP/HTTP JSON (got "${protocol}")`);
  // The signal-specific variable is the URL as it is; the general one is a base to which /v1/traces is added.
  const tracesUrl = traces || `${base.replace(/\/+$/, '')}/v1/traces`;
  if (!/^https?:\/\/[^/]+/.test(tracesUrl) || !URL.canParse(tracesUrl))
    problems.push(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL (got "${traces || base}")`);
  const sampler = (env.OTEL_TRACES_SAMPLER || 'parentbased_always_on').toLowerCase();
  if (!SAMPLERS.includes(sampler)) problems.push(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')} (got "${env.OTEL_TRACES_SAMPLER}")`);
  let samplerArg: number | undefined;
  if (env.OTEL_TRACES_SAMPLER_ARG) {
    samplerArg = Number(env.OTEL_TRACES_SAMPLER_ARG);
    if (!Number.isFinite(samplerArg) || samplerArg < 0 || samplerArg > 1)
      problems.push(`OTEL_TRACES_SAMPLER_ARG must be a ratio between 0 and 1 (got "${env.OTEL_TRACES_SAMPLER_ARG}")`);
  }
  return {
    tracesUrl,
    serviceName: env.OTEL_SERVICE_NAME || 'atrium',
    sampler,
    samplerArg,
    resourceAttributes: keyValues(env.OTEL_RESOURCE_ATTRIBUTES),
    headers: { ...keyValues(env.OTEL_EXPORTER_OTLP_HEADERS), ...keyValues(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
  };
}

/** W3C Baggage-style `key=value,key2=value2` (values percent-decoded), at most 64 pairs. */
function keyValues(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text) return out;
  for (const pair of text.split(',').slice(0, 64)) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    try {
      out[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      out[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
    }
  }
  return out;
}

function samplerFor(c: TracingConfig): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(c.samplerArg ?? 1);
  switch (c.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

let on = false;
let provider: TracerProvider | null = null;
let users = 0;
const tracer = trace.getTracer('atrium', '0.1.0');

/** Whether this process traces (the first startTracing with a configuration decides; one provider per process). */
export const tracingOn = (): boolean => on;

/**
 * Registers the provider, the AsyncLocalStorage context manager and the W3C trace-context propagator once per
 * process; later calls share them. Answers the stop that flushes the spans still queued (the last one shuts down).
 */
export function startTracing(c: TracingConfig | null): () => Promise<void> {
  if (!c) return async () => {};
  if (!provider) {
    provider = new TracerProvider({
      sampler: samplerFor(c),
      resource: resourceFromAttributes({ ...c.resourceAttributes, 'service.name': c.serviceName }),
      spanLimits: { attributeValueLengthLimit: 2048, attributeCountLimit: 64, linkCountLimit: 32 },
      spanProcessors: [
        new BatchSpanProcessor({
          exporter: new OTLPTraceExporter({ url: c.tracesUrl, headers: c.headers }),
          // Bounded: a backend that is down costs dropped spans, never memory.
          maxQueueSize: 4096,
          maxExportBatchSize: 512,
          scheduledDelayMillis: 1000,
        }),
      ],
    });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(provider);
    on = true;
  }
  users++;
  let stopped = false;
  return async () => {
    if (stopped) return;
    stopped = true;
    if (--users === 0) await provider?.forceFlush().catch(() => {});
  };
}

/** Sends the spans ended so far (tests, and a process about to exit). */
export async function flushTraces(): Promise<void> {
  await provider?.forceFlush();
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent: the active context when absent. */
  parent?: Context;
  links?: Link[];
  startTime?: number;
}

/**
 * Runs fn inside a new span (the active one for everything fn awaits), ended when fn settles; a throw is
 * recorded as the span's error (its message only: no stack, no values). Off: fn(undefined) and nothing else.
 */
export function withSpan<T>(name: string, opts: SpanOptions, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  if (!on) return fn(undefined);
  const parent = opts.parent ?? context.active();
  const span = tracer.startSpan(
    name,
    { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes, links: opts.links, startTime: opts.startTime },
    parent,
  );
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await fn(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A span started now and ended by the caller (work whose end is not the end of one function). */
export function startSpan(name: string, opts: SpanOptions = {}): Span | undefined {
  if (!on) return undefined;
  return tracer.startSpan(
    name,
    { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes, links: opts.links, startTime: opts.startTime },
    opts.parent ?? context.active(),
  );
}

/** Runs fn with span as the active span. */
export function inSpan<T>(span: Span | undefined, fn: () => T): T {
  if (!span) return fn();
  return context.with(trace.setSpan(context.active(), span), fn);
}

export function failSpan(span: Span | undefined, err: unknown): void {
  if (!span) return;
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message.slice(0, 500) : String(err).slice(0, 500) });
}

/** The W3C traceparent of a span (or of the active one): what an outbox event, an invocation or a job carries. */
export function traceparentOf(span?: Span): string | null {
  if (!on) return null;
  const sc = (span ?? trace.getActiveSpan())?.spanContext();
  if (!sc || !trace.isSpanContextValid(sc)) return null;
  return `00-${sc.traceId}-${sc.spanId}-0${(sc.traceFlags & 1).toString(16)}`;
}

const TRACEPARENT_RE = /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/;

/** The context a stored traceparent continues (the root when there is none or it is malformed). */
export function contextOf(traceparent: string | null | undefined): Context {
  if (!on || !traceparent || !TRACEPARENT_RE.test(traceparent)) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}

/** A link to the span a stored traceparent names (for work that serves several traces at once). */
export function linkTo(traceparent: string | null | undefined): Link | null {
  const sc = trace.getSpanContext(contextOf(traceparent));
  return sc ? { context: sc } : null;
}

/** Adds traceparent (and tracestate) of the active span to outgoing headers. */
export function injectTraceHeaders(headers: Record<string, string>): void {
  if (!on) return;
  propagation.inject(context.active(), headers);
}

/** The context an incoming request's traceparent/tracestate continue. */
export function extractFromHeaders(headers: Record<string, string | string[] | undefined>): Context {
  return propagation.extract(ROOT_CONTEXT, headers);
}

/** The active trace's ids, for log lines (pino's mixin) and problem answers. */
export function activeTraceIds(): { traceId: string; spanId: string } | null {
  if (!on) return null;
  const sc = trace.getActiveSpan()?.spanContext();
  if (!sc || !trace.isSpanContextValid(sc)) return null;
  return { traceId: sc.traceId, spanId: sc.spanId };
}

/** pino's mixin: every line written inside a traced context carries traceId and spanId. */
export const traceLogMixin = (): Record<string, string> => activeTraceIds() ?? {};

/**
 * Statement text for a span: literals replaced by `?` (string, dollar-quoted and numeric constants), so a value
 * inlined into SQL (a tenant binding, a COPY) never leaves in a trace; bound parameters ($1) are already absent.
 */
export function sanitizeSql(text: string): string {
  const bounded = text.length > 4000 ? `${text.slice(0, 4000)}…` : text;
  return bounded
    .replace(/\$([A-Za-z_]\w*)?\$[\s\S]*?\$\1\$/g, '?')
    .replace(/'(?:[^']|'')*'/g, '?')
    .replace(/(?<![\w$.])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w])/g, '?');
}

/** Kysely's log hook when traced: each statement becomes a CLIENT span under the active one, its text sanitised. */
export function statementSpan(event: { level: 'query' | 'error'; query: { sql: string }; queryDurationMillis: number; error?: unknown }): void {
  if (!on) return;
  const end = Date.now();
  const text = sanitizeSql(event.query.sql);
  const operation = /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? 'SQL';
  const span = tracer.startSpan(
    operation,
    {
      kind: SpanKind.CLIENT,
      startTime: end - event.queryDurationMillis,
      attributes: { 'db.system.name': 'postgresql', 'db.operation.name': operation, 'db.query.text': text },
    },
    context.active(),
  );
  if (event.level === 'error') failSpan(span, (event.error as { code?: string })?.code ? `SQLSTATE ${(event.error as { code: string }).code}` : 'error');
  span.end(end);
}
