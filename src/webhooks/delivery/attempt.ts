// One delivery attempt over HTTP: the signed POST of an invocation's payload, the answer read up to a
// limit, and what the answer means for the retry schedule.
import type { KeyObject } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Agent } from 'undici';
import { OutboundRefused } from '../../platform/outbound.ts';
import { injectTraceHeaders } from '../../platform/tracing.ts';
import { signatureHeaders } from '../sign.ts';

/** Bytes of a response kept on the attempt; the rest of a large answer is not read. */
export const RESPONSE_KEEP_BYTES = 4096;
const RESPONSE_READ_LIMIT = 64 * 1024;

export interface AttemptOutcome {
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
  retryAfterMs: number | null;
  refused: boolean;
}

export interface AttemptRequest {
  agent: Agent;
  url: string;
  webhookId: string;
  payload: string;
  /** The HMAC key as a KeyObject: building one from bytes on every signature costs more than the HMAC itself. */
  key: KeyObject;
  /** The Secret for X-Webhook-Secret, or null when that header is switched off. */
  legacySecret: string | null;
  timeoutMs: number;
}

/** Delay before the next attempt: the schedule's entry ±20%, or Retry-After within twice the entry. */
export function nextDelayMs(scheduledMs: number, retryAfterMs: number | null, random = Math.random()): number {
  if (retryAfterMs !== null) return Math.max(0, Math.min(retryAfterMs, 2 * scheduledMs));
  return Math.round(scheduledMs * (0.8 + 0.4 * random));
}

/** Retry-After as seconds or an HTTP date, in ms; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

export async function postAttempt(r: AttemptRequest): Promise<AttemptOutcome> {
  const signature = signatureHeaders(r.key, r.webhookId, r.payload);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'Atrium-Webhooks/1',
    'webhook-id': signature['webhook-id'],
    'webhook-timestamp': signature['webhook-timestamp'],
    'webhook-signature': signature['webhook-signature'],
  };
  if (r.legacySecret !== null) headers['x-webhook-secret'] = r.legacySecret;
  // Traced: the attempt's span goes with the request (traceparent, tracestate), so the receiver continues the trace.
  injectTraceHeaders(headers);
  const target = targetOf(r.url);
  // A controller and a plain timer: AbortSignal.timeout() costs a third of a bare request (it is tracked for GC).
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), r.timeoutMs);
  try {
    const res = await r.agent.request({
      origin: target.origin,
      path: target.path,
      method: 'POST',
      headers,
      body: r.payload,
      signal: timeout.signal,
      headersTimeout: r.timeoutMs,
      bodyTimeout: r.timeoutMs,
    });
    const body = await readLimited(res.body);
    return {
      statusCode: res.statusCode,
      responseBody: body,
      error: null,
      retryAfterMs: res.statusCode === 429 || res.statusCode === 503 ? parseRetryAfter(res.headers['retry-after']) : null,
      refused: false,
    };
  } catch (err) {
    const refused = findRefusal(err);
    if (refused) return { statusCode: null, responseBody: null, error: refused.message, retryAfterMs: null, refused: true };
    const message = timeout.signal.aborted ? `timed out after ${r.timeoutMs} ms` : describeError(err);
    return { statusCode: null, responseBody: null, error: message, retryAfterMs: null, refused: false };
  } finally {
    clearTimeout(timer);
  }
}

const targets = new Map<string, { origin: string; path: string }>();

/** A subscription's URL split for undici, parsed once (every delivery to it reuses the result). */
function targetOf(url: string): { origin: string; path: string } {
  let target = targets.get(url);
  if (!target) {
    const u = new URL(url);
    target = { origin: u.origin, path: `${u.pathname}${u.search}` };
    if (targets.size > 10_000) targets.clear();
    targets.set(url, target);
  }
  return target;
}

/** The first RESPONSE_KEEP_BYTES of the answer; reading stops at RESPONSE_READ_LIMIT. Events, not an async iterator: cheaper per answer. */
function readLimited(body: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let read = 0;
    const done = () => resolve(Buffer.concat(chunks).subarray(0, RESPONSE_KEEP_BYTES).toString('utf8'));
    body.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read - chunk.length < RESPONSE_KEEP_BYTES) chunks.push(chunk);
      if (read >= RESPONSE_READ_LIMIT) {
        body.removeAllListeners('data');
        body.on('error', () => {});
        body.destroy();
        done();
      }
    });
    body.once('end', done);
    body.once('error', reject);
  });
}

function findRefusal(err: unknown): OutboundRefused | null {
  let current: unknown = err;
  for (let i = 0; i < 5 && current; i++) {
    if (current instanceof OutboundRefused) return current;
    if (current instanceof AggregateError) {
      const inner = current.errors.find((e) => e instanceof OutboundRefused);
      if (inner) return inner;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

function describeError(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code;
  const message = e.message || e.cause?.message || String(err);
  return code ? `${code}: ${message}` : message;
}
