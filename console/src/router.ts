// Client-side routes under /console: the server answers index.html for every one of them, so a
// reload or a shared link opens the same page.
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/console';

export function currentPath(): string {
  // Under a tenant's base path (/t/{slug}/console/…) the pages are the same.
  const path = location.pathname.replace(/^\/t\/[^/]+(?=\/console(\/|$))/, '');
  const p = path.startsWith(BASE) ? path.slice(BASE.length) : path;
  return p.replace(/\/+$/, '') || '/';
}

export function navigate(path: string): void {
  history.pushState(null, '', `${BASE}${path}`);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const on = () => setPath(currentPath());
    addEventListener('popstate', on);
    return () => removeEventListener('popstate', on);
  }, []);
  return path;
}

/** `/webhooks/:id` against `/webhooks/abc` gives {id: 'abc'}; null when it does not match. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const a = pattern.split('/');
  const b = path.split('/');
  if (a.length !== b.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    if (a[i].startsWith(':')) params[a[i].slice(1)] = decodeURIComponent(b[i]);
    else if (a[i] !== b[i]) return null;
  }
  return params;
}
