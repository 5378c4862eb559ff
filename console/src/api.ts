// The console's only way to the server: the public API with the signed-in user's access token,
// refreshed before it expires (and once more on a 401), and problem+json turned into ApiError.
import type { Answer, Schema } from './api-types.ts';

export interface Session {
  /** What the user typed: a slug or a tenant id; sent as X-AppTenant. */
  tenant: string;
  tenantId: string;
  accessToken: string;
  refreshToken: string;
  /** Epoch ms when the access token expires. */
  expiresAt: number;
  userId: string | null;
  userName: string;
  roles: string[];
}

/**
 * A problem+json answer as the server documents it; every field optional here, because a proxy or a network
 * error may answer something else (then only status and title are known).
 */
export type Problem = Partial<Schema<'Problem'>>;

export class ApiError extends Error {
  readonly status: number;
  readonly problem: Problem;
  constructor(status: number, problem: Problem) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

const STORAGE_KEY = 'atrium.console.session';
// Refreshed this long before expiry, so a request never leaves with a token about to lapse.
const REFRESH_MARGIN_MS = 60_000;

type Listener = (s: Session | null) => void;
let current: Session | null = load();
let refreshing: Promise<void> | null = null;
let timer: ReturnType<typeof setTimeout> | undefined;
const listeners = new Set<Listener>();
// A reload keeps the tab's session, and its refresh is scheduled again.
scheduleRefresh(current);

function load(): Session | null {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    return raw ? (JSON.parse(raw) as Session) : null;
  } catch {
    return null;
  }
}

function store(s: Session | null): void {
  current = s;
  // Per browser tab: a session of one tenant in one tab never leaks into another tab's.
  if (s) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(s));
  else sessionStorage.removeItem(STORAGE_KEY);
  scheduleRefresh(s);
  for (const l of listeners) l(s);
}

function scheduleRefresh(s: Session | null): void {
  clearTimeout(timer);
  if (s) timer = setTimeout(() => void refresh().catch(() => signOut()), Math.max(1000, s.expiresAt - Date.now() - REFRESH_MARGIN_MS));
}

export const session = (): Session | null => current;
export function onSession(l: Listener): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

export const hasRole = (s: Session | null, role: string): boolean => !!s && (s.roles.includes('Administrator') || s.roles.includes(role));

type TokenAnswer = Answer<'/api/auth/token', 'post'>;

async function problemOf(res: Response): Promise<ApiError> {
  let problem: Problem = { status: res.status, title: res.statusText };
  try {
    const text = await res.text();
    if (text) problem = JSON.parse(text) as Problem;
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(res.status, problem);
}

export async function signIn(tenant: string, userName: string, password: string): Promise<Session> {
  const res = await fetch('/api/auth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-apptenant': tenant },
    body: JSON.stringify({ UserName: userName, Password: password, Persistent: false, LoginAsDelegate: false, DelegatedUserName: null }),
  });
  if (!res.ok) throw await problemOf(res);
  const token = (await res.json()) as TokenAnswer;
  const who = await fetch('/api/v3/whoami', { headers: { authorization: `Bearer ${token.accessToken}`, 'x-apptenant': tenant } });
  if (!who.ok) throw await problemOf(who);
  const me = (await who.json()) as { tenantId: string; userId: string | null; userName: string | null; roles: string[] };
  const s: Session = {
    tenant,
    tenantId: me.tenantId,
    accessToken: token.accessToken,
    refreshToken: token.refreshToken,
    expiresAt: Date.now() + token.expiresIn * 1000,
    userId: me.userId,
    userName: me.userName ?? userName,
    roles: me.roles,
  };
  store(s);
  return s;
}

export function signOut(): void {
  store(null);
}

/** Single-use refresh tokens: concurrent callers share one refresh. */
function refresh(): Promise<void> {
  refreshing ??= (async () => {
    const s = current;
    if (!s) throw new ApiError(401, { detail: 'Signed out.' });
    const res = await fetch('/api/auth/token/refresh', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-apptenant': s.tenantId },
      body: JSON.stringify({ refreshToken: s.refreshToken }),
    });
    if (!res.ok) throw await problemOf(res);
    const token = (await res.json()) as TokenAnswer;
    store({ ...s, accessToken: token.accessToken, refreshToken: token.refreshToken, expiresAt: Date.now() + token.expiresIn * 1000 });
  })().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

export interface RequestOptions {
  method?: string;
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** A fetch of the API as the signed-in user; the Response of a 2xx, else an ApiError. */
export async function call(path: string, opts: RequestOptions = {}): Promise<Response> {
  const send = async () => {
    const s = current;
    if (!s) throw new ApiError(401, { detail: 'Not signed in.' });
    if (s.expiresAt - Date.now() < REFRESH_MARGIN_MS / 2) await refresh();
    const headers: Record<string, string> = { authorization: `Bearer ${current?.accessToken}`, 'x-apptenant': s.tenantId, ...opts.headers };
    let body = opts.body;
    if (opts.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.json);
    }
    return fetch(path, { method: opts.method ?? 'GET', headers, body, signal: opts.signal });
  };
  let res = await send();
  if (res.status === 401 && current) {
    try {
      await refresh();
    } catch {
      signOut();
      throw await problemOf(res);
    }
    res = await send();
  }
  if (!res.ok) throw await problemOf(res);
  return res;
}

export async function getJson<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const res = await call(path, opts);
  const text = await res.text();
  return (text ? JSON.parse(text) : null) as T;
}

/** Saves an answer as a file: the name from Content-Disposition, else `fallback`. */
export async function download(path: string, opts: RequestOptions, fallback: string): Promise<string> {
  const res = await call(path, opts);
  const disposition = res.headers.get('content-disposition') ?? '';
  const name = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition)?.[1] ?? fallback;
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = decodeURIComponent(name);
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return a.download;
}

export const enc = encodeURIComponent;
