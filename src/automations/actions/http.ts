// Rest and Download. Outbound calls use the webhook worker's address guard (no loopback, private or
// metadata addresses unless ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS); `isApiCall` calls Atrium's own API
// instead: the url is a path under the tenant's API, sent with an access token of the app that saved the
// automation, so the call has exactly that app's roles and tenant.
import zlib from 'node:zlib';
import { type Dispatcher, FormData as UndiciFormData, request as undiciRequest } from 'undici';
import { literalHostProblem } from '../../platform/outbound.ts';
import { injectTraceHeaders } from '../../platform/tracing.ts';
import { type ActionCall, ActionError, type Handler } from '../engine.ts';
import { asText } from '../expressions.ts';
import { type FileValue, isTextual } from './file-value.ts';
import { fileInput, findFile, keepFile, mediaTypeOf } from './run-files.ts';

/** An access token for the app the automation runs as (the run services reuse one until shortly before it expires). */
async function apiToken(call: ActionCall): Promise<string> {
  const { tenantId, runAsAppId } = call.run.automation;
  if (!runAsAppId) throw new ActionError('isApiCall needs the automation to be saved by an app (it acts as that app)');
  return (await call.run.services.issueAppToken(tenantId, runAsAppId)).accessToken;
}

/**
 * The tenant's credentials on an isApiCall request: the saving app's headers (routes that take app headers
 * only accept nothing else), or a token of that app when the automation was saved with a token.
 */
async function addCredentials(call: ActionCall, headers: Record<string, string>): Promise<void> {
  const { tenantId, apiCredentials } = call.run.automation;
  for (const k of Object.keys(headers)) if (/^(authorization|x-app|x-accesstoken)/i.test(k)) delete headers[k];
  if (apiCredentials) {
    const c = JSON.parse(await call.run.services.openCredentials(apiCredentials)) as { appId: string; appSecret: string; appUser?: string };
    headers['x-apptenant'] = tenantId;
    headers['x-appid'] = c.appId;
    headers['x-appsecret'] = c.appSecret;
    if (c.appUser) headers['x-appuser'] = c.appUser;
    return;
  }
  headers.authorization = `Bearer ${await apiToken(call)}`;
}

export function pairs(v: unknown): { name: string; value: unknown }[] {
  if (Array.isArray(v))
    return v
      .filter((p) => p && typeof p === 'object')
      .map((p) => ({ name: asText((p as any).name ?? (p as any).Name ?? (p as any).key ?? (p as any).Key), value: (p as any).value ?? (p as any).Value }));
  if (v && typeof v === 'object') return Object.entries(v).map(([name, value]) => ({ name, value }));
  return [];
}

/** The request body for bodyMediaType Json (default), Raw, UrlEncodedFormData, MultipartFormData or File. */
function requestBody(call: ActionCall, headers: Record<string, string>): string | Uint8Array | UndiciFormData | undefined {
  const mediaType = call.text('bodyMediaType') || 'Json';
  const body = call.get('body');
  const setType = (t: string) => {
    if (!Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) headers['content-type'] = t;
  };
  switch (mediaType) {
    case 'Json':
      if (body === undefined || body === null || body === '') return undefined;
      setType('application/json');
      return typeof body === 'string' ? body : JSON.stringify(body);
    case 'Raw':
      if (body === undefined || body === null) return undefined;
      setType('text/plain; charset=utf-8');
      return asText(body);
    case 'UrlEncodedFormData': {
      const form = new URLSearchParams();
      for (const p of pairs(call.get('bodyFormData') ?? body)) form.append(p.name, asText(p.value));
      setType('application/x-www-form-urlencoded');
      return form.toString();
    }
    case 'MultipartFormData': {
      const form = new UndiciFormData();
      for (const p of pairs(call.get('bodyFormData') ?? body)) {
        if (findFile(call.run, p.value) || (p.value && typeof p.value === 'object' && typeof (p.value as FileValue).contentBase64 === 'string')) {
          const f = fileInput(call.run, p.value);
          form.append(p.name, new Blob([new Uint8Array(f.bytes)], { type: f.contentType }), f.fileName);
        } else form.append(p.name, asText(p.value));
      }
      return form;
    }
    case 'File': {
      // A file of the run (e.g. {{['DownloadFile']$.Content}}) goes as its bytes, anything else as its text.
      const f = fileInput(call.run, body);
      setType(f.contentType);
      return new Uint8Array(f.bytes);
    }
    default:
      throw new ActionError(`bodyMediaType must be Json, Raw, UrlEncodedFormData, MultipartFormData or File (got "${mediaType}")`);
  }
}

/** Where the request goes and how it is authenticated. */
export async function target(call: ActionCall, headers: Record<string, string>): Promise<URL> {
  const raw = call.text('url');
  if (call.bool('isApiCall')) {
    const base = new URL(call.run.services.apiBaseUrl());
    // Only a path of our own API: an absolute URL or a scheme-relative one could leave for another host.
    if (!raw.startsWith('/') || raw.startsWith('//')) throw new ActionError('with isApiCall, url is a path of the API such as /api/v3/users');
    const url = new URL(raw, base);
    if (url.origin !== base.origin) throw new ActionError('with isApiCall, url must stay on the API');
    await addCredentials(call, headers);
    return url;
  }
  return outboundUrl(call, raw, 'url');
}

/** An absolute http(s) URL outside Atrium, past the outbound address guard (the agent checks resolved names). */
export function outboundUrl(call: ActionCall, raw: string, fieldName: string): URL {
  if (!URL.canParse(raw)) throw new ActionError(`${fieldName} is not an absolute URL: "${raw.slice(0, 200)}"`);
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ActionError(`${fieldName} must be http or https`);
  const refused = literalHostProblem(url, call.run.services.config.webhookAllowPrivateNetworks);
  if (refused) throw new ActionError(refused);
  return url;
}

/** The answer as the actions read it: its status, a header by name, and its body (read whole, within the limit). */
export interface SentResponse {
  status: number;
  headers: { get: (name: string) => string | null };
}

/** Content encodings a response may come in although none is asked for: decoded like fetch would. */
const DECODERS: Record<string, (buf: Buffer, opts: zlib.ZlibOptions) => Buffer> = {
  gzip: zlib.gunzipSync,
  'x-gzip': zlib.gunzipSync,
  deflate: zlib.inflateSync,
  br: zlib.brotliDecompressSync as (buf: Buffer, opts: zlib.ZlibOptions) => Buffer,
};

/**
 * One HTTP exchange through undici's dispatcher API (not fetch: no WHATWG streams, Request/Response and
 * signal objects per call — most of a Rest action's CPU before; bench/automations.ts). Redirects are not
 * followed (as fetch's redirect 'manual'): a 3xx is the answer.
 */
export async function send(
  call: ActionCall,
  method: string,
  url: URL,
  headers: Record<string, string>,
  body: string | Uint8Array | UndiciFormData | undefined,
): Promise<{ res: SentResponse; bytes: Buffer }> {
  const run = call.run;
  const timeout = Math.max(1, Math.min(run.deadline - Date.now(), run.services.config.requestTimeoutMs * 2));
  const signal = AbortSignal.any([run.signal, AbortSignal.timeout(timeout)]);
  const own = call.bool('isApiCall');
  // Traced: the action's span goes with the request, so the service called (or our own API) continues the trace.
  injectTraceHeaders(headers);
  if (!Object.keys(headers).some((k) => k.toLowerCase() === 'accept')) headers.accept = '*/*';
  try {
    const res = await undiciRequest(url, {
      method: method as Dispatcher.HttpMethod,
      headers,
      body: body as Dispatcher.DispatchOptions['body'],
      signal,
      // Our own API is on this host: the guard is for everyone else's addresses.
      ...(own ? {} : { dispatcher: run.services.agent }),
    });
    const header = (name: string): string | null => {
      const v = res.headers[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    };
    const limit = run.services.config.automationMaxOutputBytes;
    const declared = Number(header('content-length') ?? 0);
    if (declared > limit) {
      res.body.destroy();
      throw new ActionError(`the response is ${declared} bytes; the limit is ${limit}`);
    }
    // Read a chunk at a time and stop at the limit: a response without (or with a false) length is not
    // read whole before it is measured.
    const chunks: Buffer[] = [];
    let length = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      length += chunk.byteLength;
      if (length > limit) {
        res.body.destroy();
        throw new ActionError(`the response is more than ${limit} bytes; the limit is ${limit}`);
      }
      chunks.push(chunk);
    }
    let bytes: Buffer = Buffer.concat(chunks, length);
    const encoding = (header('content-encoding') ?? '').trim().toLowerCase();
    const decode = Object.hasOwn(DECODERS, encoding) ? DECODERS[encoding] : undefined;
    if (decode && bytes.length > 0)
      try {
        // Bounded like the body itself: a small compressed answer cannot grow past the limit.
        bytes = decode(bytes, { maxOutputLength: limit });
      } catch (err) {
        throw new ActionError(`the ${encoding} response could not be decoded within ${limit} bytes: ${(err as Error).message}`);
      }
    return { res: { status: res.statusCode, headers: { get: header } }, bytes };
  } catch (err) {
    if (err instanceof ActionError) throw err;
    run.checkTime();
    const cause = (err as { cause?: Error }).cause;
    throw new ActionError(`${method} ${url.origin}${url.pathname} failed: ${cause?.message ?? (err as Error).message}`);
  }
}

const rest: Handler = async (call) => {
  const method = (call.text('method') || 'GET').toUpperCase();
  if (!/^[A-Z]{3,10}$/.test(method)) throw new ActionError(`method "${method}" is not an HTTP method`);
  const headers: Record<string, string> = {};
  for (const p of pairs(call.get('requestHeaders'))) if (p.name) headers[p.name.toLowerCase()] = asText(p.value);
  const url = await target(call, headers);
  const body = method === 'GET' || method === 'HEAD' ? undefined : requestBody(call, headers);
  const { res, bytes } = await send(call, method, url, headers, body);
  const contentType = res.headers.get('content-type') ?? '';
  let content: unknown = null;
  if (bytes.length > 0) {
    const textual = contentType === '' || isTextual(contentType);
    // A binary answer is kept as a file of the run; Content reads as its Base64 and hands the bytes on.
    if (!textual) content = keepFile(call, url.pathname.split('/').pop() || 'download', contentType, bytes).content;
    else {
      const text = bytes.toString('utf8');
      content = text;
      if (/json/i.test(contentType))
        try {
          content = JSON.parse(text);
        } catch {}
    }
  }
  const output: Record<string, unknown> = { StatusCode: res.status, IsSuccessStatusCode: res.status >= 200 && res.status < 300, Content: content };
  output.Headers = namedHeaders(res.headers, call.get('responseHeaders'));
  if (call.bool('ensureSuccessStatusCode') && !output.IsSuccessStatusCode)
    throw new ActionError(`${method} ${url.pathname} answered ${res.status}: ${bytes.toString('utf8').slice(0, 500)}`);
  return { output };
};

/**
 * The response headers `responseHeaders` names (e.g. ["date","x-api-version"]), under the names as written
 * there; a header the answer lacks is left out. Without responseHeaders, none.
 */
function namedHeaders(headers: { get: (name: string) => string | null }, names: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const list = Array.isArray(names) ? names : typeof names === 'string' && names !== '' ? names.split(',') : [];
  for (const n of list.slice(0, 100)) {
    const name = asText(n).trim();
    if (!name) continue;
    const v = headers.get(name);
    if (v !== null) out[name] = v;
  }
  return out;
}

/**
 * Download: GET `url`; the result's `Content` is the file's content (its text, or the Base64 of a binary
 * file), with FileName, ContentType, Size and FilePath; the file is kept in the run for a Rest File body,
 * an SftpUpload filePath or an attachment.
 */
const download: Handler = async (call) => {
  const headers: Record<string, string> = {};
  for (const p of pairs(call.get('requestHeaders'))) if (p.name) headers[p.name.toLowerCase()] = asText(p.value);
  const url = await target(call, headers);
  const { res, bytes } = await send(call, 'GET', url, headers, undefined);
  if (res.status < 200 || res.status >= 300) throw new ActionError(`GET ${url.pathname} answered ${res.status}`);
  const name = call.text('fileName') || decodeURIComponent(url.pathname.split('/').pop() || '') || 'download';
  const type = res.headers.get('content-type') || mediaTypeOf(name);
  const file = keepFile(call, name, type, bytes);
  const output = { Content: file.content, FileName: file.fileName, ContentType: type, Size: bytes.length, FilePath: file.path };
  // Atrium's older file object read the text and the Base64 as `$.text` and `$.contentBase64` (its other
  // names match these case-insensitively): kept readable, not enumerable, so never serialised or logged.
  Object.defineProperty(output, 'contentBase64', { get: () => bytes.toString('base64'), enumerable: false });
  if (isTextual(type)) Object.defineProperty(output, 'text', { get: () => file.content, enumerable: false });
  return { output };
};

export const HTTP_HANDLERS: Record<string, Handler> = { Rest: rest, Download: download };
