// The import's client of a source platform (or another Atrium): the Data Extraction API with the app
// headers, as a careful client reads it — a stream (NDJSON) where the source answers one (prefetch.ts
// spools it), else pages in a stable order on the query's key; 429 + Retry-After honoured, 5xx and
// timeouts retried with backoff, and never more than `maxInFlight` requests at once. Credentials go in headers only, never in messages.
import { blockedReason } from '../platform/outbound.ts';

export interface SourceOptions {
  baseUrl: string;
  tenantId: string;
  appId: string;
  appSecret: string;
  userId?: string;
  /** Requests in flight at most (default 2). */
  maxInFlight?: number;
  /** Rows per page when paging (default 2,000: well inside the platform's 30-second limit). */
  pageSize?: number;
  /** Attempts per request before giving up (default 8). */
  attempts?: number;
  /** One request's time limit in ms (default 60 s for a stream's first byte, the platform's 30 s + margin). */
  timeoutMs?: number;
}

/** A refusal or failure of the source, one line naming the cause (the CLI prints it and exits 1). */
export class ImportError extends Error {
  /** The source's HTTP status, when the source refused (401, 403, 404…). */
  readonly status?: number;
  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}

/** Time spent waiting on the source (Retry-After, backoff) and how often, for the report. */
export interface WaitStats {
  throttled: number;
  retried: number;
  waitedMs: number;
}

/** The largest Retry-After honoured (a source asking for longer is treated as failing). */
const MAX_RETRY_AFTER_MS = 120_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class Limiter {
  #active = 0;
  readonly #queue: (() => void)[] = [];
  readonly max: number;
  constructor(max: number) {
    this.max = max;
  }
  async acquire(): Promise<() => void> {
    if (this.#active >= this.max) await new Promise<void>((r) => this.#queue.push(r));
    this.#active++;
    return () => {
      this.#active--;
      this.#queue.shift()?.();
    };
  }
}

export type SourceRow = Record<string, unknown>;

export class SourceClient {
  readonly waits: WaitStats = { throttled: 0, retried: 0, waitedMs: 0 };
  readonly #opts: Required<Omit<SourceOptions, 'userId'>> & { userId?: string };
  readonly #limiter: Limiter;
  readonly #encoding: string;

  constructor(opts: SourceOptions) {
    let base: URL;
    try {
      base = new URL(opts.baseUrl);
    } catch {
      throw new ImportError(`--from ${JSON.stringify(opts.baseUrl)} is not a URL`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new ImportError(`--from must be an http(s) URL, not ${base.protocol}`);
    const maxInFlight = opts.maxInFlight ?? 2;
    if (!Number.isInteger(maxInFlight) || maxInFlight < 1 || maxInFlight > 16) throw new ImportError('requests in flight must be 1 to 16');
    this.#opts = {
      maxInFlight,
      pageSize: Math.min(Math.max(opts.pageSize ?? 2000, 1), 10_000),
      attempts: Math.min(Math.max(opts.attempts ?? 8, 1), 20),
      timeoutMs: opts.timeoutMs ?? 60_000,
      ...opts,
      baseUrl: base.toString().replace(/\/$/, ''),
    };
    this.#limiter = new Limiter(maxInFlight);
    // Compression pays where bandwidth is scarce; on this machine's loopback it only costs CPU on both ends
    // (the source's gzip and our gunzip: about 2.7 s of a scale-5 import), so a loopback source is asked for
    // uncompressed answers.
    const loopback = base.hostname === 'localhost' || blockedReason(base.hostname, [])?.startsWith('loopback') === true;
    this.#encoding = loopback ? 'identity' : 'gzip, deflate';
  }

  get source(): string {
    return `${this.#opts.baseUrl} tenant ${this.#opts.tenantId}`;
  }

  #headers(accept: string, token?: string): Record<string, string> {
    if (token) return { authorization: `Bearer ${token}`, accept, 'content-type': 'application/json', 'accept-encoding': this.#encoding };
    const h: Record<string, string> = {
      'x-apptenant': this.#opts.tenantId,
      'x-appid': this.#opts.appId,
      'x-appsecret': this.#opts.appSecret,
      accept,
      'content-type': 'application/json',
      'accept-encoding': this.#encoding,
    };
    if (this.#opts.userId) h['x-appuser'] = this.#opts.userId;
    return h;
  }

  #token: Promise<string> | null = null;
  /** An access token of the app (POST /api/auth/token with its headers): the Custom Tables API takes only tokens. */
  accessToken(): Promise<string> {
    this.#token ??= this.request('POST', '/api/auth/token', undefined, 'application/json', async (res) => {
      const body = (await res.json().catch(() => null)) as { access_token?: unknown; accessToken?: unknown } | null;
      const token = body?.access_token ?? body?.accessToken;
      if (typeof token !== 'string' || !token) throw new ImportError('source answered no access token');
      return token;
    });
    return this.#token;
  }

  /** A JSON document of the source: with the app headers, or with the app's access token. */
  async getJson(path: string, auth: 'app' | 'token' = 'app'): Promise<unknown> {
    const token = auth === 'token' ? await this.accessToken() : undefined;
    return this.request(
      'GET',
      path,
      undefined,
      'application/json',
      async (res) => {
        const body = (await res.json().catch(() => undefined)) as unknown;
        if (body === undefined) throw new ImportError(`source ${path}: malformed JSON`);
        return body;
      },
      token,
    );
  }

  /**
   * One request with the retry policy: 429 waits Retry-After (seconds or an HTTP date), 5xx and network
   * errors or timeouts back off exponentially (0.5 s, 1 s, 2 s … capped at 15 s); 401/403/404 and other
   * 4xx fail at once with the cause. `consume` reads the body while the in-flight slot is held.
   */
  async request<T>(
    method: string,
    path: string,
    body: unknown,
    accept: string,
    consume: (res: Response) => Promise<T>,
    token?: string,
    attempts = this.#opts.attempts,
  ): Promise<T> {
    const url = `${this.#opts.baseUrl}${path}`;
    for (let attempt = 1; ; attempt++) {
      const release = await this.#limiter.acquire();
      let wait = 0;
      try {
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(), this.#opts.timeoutMs);
        let res: Response;
        try {
          res = await fetch(url, {
            method,
            headers: this.#headers(accept, token),
            body: body === undefined ? undefined : JSON.stringify(body),
            signal: controller.signal,
          });
        } finally {
          clearTimeout(timer);
        }
        if (res.status === 429) {
          await res.body?.cancel();
          this.waits.throttled++;
          wait = retryAfterMs(res.headers.get('retry-after'));
          if (wait > MAX_RETRY_AFTER_MS) throw new ImportError(`source ${path}: 429 with Retry-After beyond ${MAX_RETRY_AFTER_MS / 1000} s`);
        } else if (res.status >= 500) {
          await res.body?.cancel();
          wait = backoff(attempt);
          this.waits.retried++;
          if (attempt >= attempts) throw new ImportError(`source ${path}: ${res.status} after ${attempt} attempts`);
        } else if (res.status === 401 || res.status === 403) {
          await res.body?.cancel();
          throw new ImportError(
            `source refused the credentials (${res.status}): check --tenant, --app-id and the app secret, and that the app has the DataExtractionRead role`,
            res.status,
          );
        } else if (res.status === 404) {
          await res.body?.cancel();
          throw new ImportError(`source has no ${path} (404)`, 404);
        } else if (res.status >= 400) {
          const text = (await res.text()).slice(0, 300).replace(/\s+/g, ' ');
          throw new ImportError(`source ${path}: ${res.status} ${text}`);
        } else {
          return await consume(res);
        }
      } catch (err) {
        // Only the network's failures are retried (a failed fetch, a body cut short, a timeout); an error
        // of the consumer (the target database refusing a row) is not the source's and ends the read.
        const name = (err as Error).name;
        if (err instanceof ImportError || (name !== 'TypeError' && name !== 'AbortError' && name !== 'TimeoutError')) throw err;
        const cause = networkCause(err);
        if (attempt >= attempts || cause === 'ECONNREFUSED' || cause === 'ENOTFOUND' || cause === 'bad port') {
          throw new ImportError(`source ${this.#opts.baseUrl} unreachable (${cause}${attempt > 1 ? ` after ${attempt} attempts` : ''})`);
        }
        wait = backoff(attempt);
        this.waits.retried++;
      } finally {
        release();
      }
      // Waiting does not hold an in-flight slot.
      this.waits.waitedMs += wait;
      await sleep(wait);
    }
  }

  /** The names of the source's named queries (GET …/named-queries). */
  async namedQueries(): Promise<string[]> {
    return this.request('GET', '/api/v3/analytics/named-queries', undefined, 'application/json', async (res) => {
      const body = (await res.json().catch(() => null)) as unknown;
      const list = Array.isArray(body) ? body : (body as { data?: unknown })?.data;
      if (!Array.isArray(list)) throw new ImportError('source answered a malformed list of named queries');
      return list.map((q) => (typeof q === 'string' ? q : String((q as { name?: unknown; Name?: unknown }).name ?? (q as { Name?: unknown }).Name)));
    });
  }

  /** A named query's fields with their data types (GET …/metadata): the user-defined fields of an *AdditionalInformation query. */
  async metadata(namedQuery: string): Promise<{ fields: { name: string; dataType: string }[] }> {
    const path = `/api/v3/analytics/named-query/${encodeURIComponent(namedQuery)}/metadata`;
    return this.request('GET', path, undefined, 'application/json', async (res) => {
      const body = (await res.json().catch(() => null)) as { fields?: unknown } | null;
      if (!body || !Array.isArray(body.fields)) throw new ImportError(`source ${namedQuery}: malformed metadata`);
      return {
        fields: body.fields
          .filter((f): f is { name: string; dataType: string } => typeof f?.name === 'string' && typeof f?.dataType === 'string')
          .map((f) => ({ name: f.name, dataType: f.dataType })),
      };
    });
  }

  /** The row count a `…Count` named query answers (for a progress line's ETA); null when unreadable. */
  async count(countQuery: string, parameters: Record<string, unknown>): Promise<number | null> {
    const path = `/api/v3/analytics/named-query/${encodeURIComponent(countQuery)}/dynamic-execute`;
    return this.request('POST', path, { queryBuilder: {}, parameters }, 'application/json', async (res) => {
      const page = (await res.json().catch(() => null)) as { data?: { Count?: unknown }[] } | null;
      const n = page?.data?.[0]?.Count;
      return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : null;
    });
  }

  /**
   * `namedQuery`'s rows as one NDJSON stream, in a stable order on `key`, handed to `consume` while the
   * in-flight slot is held; a stream cut short is retried from the start (`consume` is called again)
   * up to `attempts` times. False when the source answers no stream (read it in pages then).
   */
  async stream(
    namedQuery: string,
    key: string[],
    parameters: Record<string, unknown>,
    consume: (body: Iterable<Uint8Array> | AsyncIterable<Uint8Array>) => Promise<void>,
    attempts = this.#opts.attempts,
  ): Promise<boolean> {
    const path = `/api/v3/analytics/named-query/${encodeURIComponent(namedQuery)}/dynamic-execute`;
    const body = { queryBuilder: { orderBy: key.map((field) => ({ field, direction: 'asc' })) }, parameters };
    return this.request(
      'POST',
      path,
      body,
      'application/x-ndjson',
      async (res) => {
        if (!/ndjson/i.test(res.headers.get('content-type') ?? '')) {
          await res.body?.cancel();
          return false;
        }
        await consume((res.body as AsyncIterable<Uint8Array> | null) ?? []);
        return true;
      },
      undefined,
      attempts,
    );
  }

  /** Every row of `namedQuery` in pages of `pageSize` ordered on `key`, each page to `onBatch`: for a source that streams nothing. */
  async readPages(namedQuery: string, key: string[], parameters: Record<string, unknown>, onBatch: (rows: SourceRow[]) => Promise<void>): Promise<number> {
    const path = `/api/v3/analytics/named-query/${encodeURIComponent(namedQuery)}/dynamic-execute`;
    const orderBy = key.map((field) => ({ field, direction: 'asc' }));
    let total = 0;
    for (let skip = 0; ; skip += this.#opts.pageSize) {
      const pageBody = { queryBuilder: { orderBy, skip, take: this.#opts.pageSize }, parameters };
      const rows = await this.request('POST', path, pageBody, 'application/json', async (res) => {
        const page = (await res.json().catch(() => null)) as { data?: unknown } | null;
        if (!page || !Array.isArray(page.data)) throw new ImportError(`source ${namedQuery}: malformed page at skip ${skip}`);
        return page.data as SourceRow[];
      });
      if (rows.length) await onBatch(rows);
      total += rows.length;
      if (rows.length < this.#opts.pageSize) return total;
    }
  }
}

/** The code of a failed fetch's cause (ECONNREFUSED…, possibly inside an AggregateError), else the error's name. */
function networkCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; errors?: { code?: string }[] } }).cause;
  return cause?.code ?? cause?.errors?.[0]?.code ?? (cause as { message?: string } | undefined)?.message ?? (err as Error).name;
}

/** Retry-After in ms: delay-seconds or an HTTP date; absent or unreadable: 1 s. */
export function retryAfterMs(value: string | null): number {
  if (!value) return 1000;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? 1000 : Math.max(0, at - Date.now());
}

const backoff = (attempt: number) => Math.min(500 * 2 ** (attempt - 1), 15_000);
