// Small shared pieces: links that route inside the app, errors as the API words them, copy
// buttons, dialogs, and a hook for loading data with its error.
import { type ComponentChildren, cloneElement, type JSX } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';
import { BASE, navigate } from './router.ts';

export function Link(props: { to: string; children: ComponentChildren; class?: string; 'aria-current'?: 'page' | undefined }) {
  const onClick = (e: MouseEvent) => {
    if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    navigate(props.to);
  };
  return (
    <a href={`${BASE}${props.to}`} class={props.class} onClick={onClick} aria-current={props['aria-current']}>
      {props.children}
    </a>
  );
}

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const problem = error instanceof ApiError ? error.problem : null;
  return (
    <div class="error" role="alert">
      <strong>
        {problem?.title ?? 'Error'}
        {problem?.status ? ` (${problem.status})` : ''}
      </strong>{' '}
      {error instanceof Error ? error.message : String(error)}
      {problem?.traceId ? (
        <div class="trace">
          Trace id <code data-testid="trace-id">{problem.traceId}</code> <CopyButton text={problem.traceId} label="Copy trace id" />
          <span class="muted"> (give it to whoever runs the server: it finds this request in the logs)</span>
        </div>
      ) : null}
      {problem?.errors?.length ? (
        <ul>
          {problem.errors.map((e) => (
            <li key={e.path}>
              <code>{e.path}</code>: {e.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="secondary"
      onClick={async () => {
        await navigator.clipboard?.writeText(text).catch(() => {});
        setDone(true);
        setTimeout(() => setDone(false), 1500);
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}

/** A modal dialog (the native <dialog>: focus is trapped and Escape closes it). */
export function Dialog(props: { title: string; open: boolean; onClose: () => void; children: ComponentChildren; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-label={props.title} onClose={props.onClose} class={props.wide ? 'wide' : undefined}>
      <h2>{props.title}</h2>
      {props.open ? props.children : null}
    </dialog>
  );
}

/** Loads with `fn` when `deps` change; `reload` loads again. */
export function useLoad<T>(fn: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: unknown; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    fn().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error) => live && setState((s) => ({ data: s.data, error, loading: false })),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** Runs an action, keeping its error and whether it is under way for the button that started it. */
export function useAction(): { busy: boolean; error: unknown; run: (fn: () => Promise<unknown>) => Promise<void>; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(null) };
}

/** A labelled control: the label names the child element by id, and the hint describes it. */
export function Field(props: { label: string; children: JSX.Element; hint?: string }) {
  const id = useId();
  const own = (props.children.props as { 'aria-describedby'?: string })['aria-describedby'];
  const described = [own, props.hint ? `${id}-hint` : null].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {cloneElement(props.children, { id, 'aria-describedby': described })}
      {props.hint ? <small id={`${id}-hint`}>{props.hint}</small> : null}
    </div>
  );
}

/** A form's submit and Cancel buttons; submit is disabled while the form's action runs. */
export function FormActions(props: { busy: boolean; label?: string; onCancel: () => void }) {
  return (
    <div class="actions">
      <button type="submit" disabled={props.busy}>
        {props.label ?? 'Save'}
      </button>
      <button type="button" class="secondary" onClick={props.onCancel}>
        Cancel
      </button>
    </div>
  );
}

export const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toISOString().replace('T', ' ').slice(0, 19) : '—');

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** What an empty list says: that it is empty, and what to do next. */
/** A table of rows under a row of column headers, scrolling sideways on narrow screens. */
export function DataTable(props: { label?: string; headers: ComponentChildren[]; children: ComponentChildren }) {
  return (
    <div class="scroll">
      <table aria-label={props.label}>
        <thead>
          <tr>
            {props.headers.map((h, i) => (
              <th key={i} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/** A run's or a delivery's status as a coloured word, with its error under it. */
export function Status(props: { status: string; error?: string | null }) {
  return (
    <>
      <span class={`status ${props.status.toLowerCase()}`}>{props.status}</span>
      {props.error ? <div class="muted">{props.error}</div> : null}
    </>
  );
}

/** The way back from a detail page to its list. */
export function BackTo(props: { to: string; label: string }) {
  return (
    <p>
      <Link to={props.to}>← {props.label}</Link>
    </p>
  );
}

export function EmptyState(props: { children: ComponentChildren }) {
  return (
    <p class="empty" data-testid="empty-state">
      {props.children}
    </p>
  );
}

const THEME_KEY = 'atrium.console.theme';
export type Theme = 'system' | 'light' | 'dark';

/** The theme chosen in this browser ('system' follows prefers-color-scheme); set on <html data-theme>. */
export function storedTheme(): Theme {
  try {
    const t = localStorage.getItem(THEME_KEY);
    return t === 'light' || t === 'dark' ? t : 'system';
  } catch {
    return 'system';
  }
}

export function applyTheme(t: Theme): void {
  if (t === 'system') document.documentElement.removeAttribute('data-theme');
  else document.documentElement.setAttribute('data-theme', t);
  try {
    if (t === 'system') localStorage.removeItem(THEME_KEY);
    else localStorage.setItem(THEME_KEY, t);
  } catch {
    // storage refused (private mode): the choice lasts for the page
  }
}

/** Light, dark, or as the system says; remembered in this browser. */
export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(storedTheme());
  const id = useId();
  return (
    <span class="theme-toggle">
      <label for={id} class="sr-only">
        Colour theme
      </label>
      <select
        id={id}
        value={theme}
        onChange={(e) => {
          const t = e.currentTarget.value as Theme;
          setTheme(t);
          applyTheme(t);
        }}
      >
        <option value="system">Theme: system</option>
        <option value="light">Theme: light</option>
        <option value="dark">Theme: dark</option>
      </select>
    </span>
  );
}

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex="0"]';

/**
 * Arrow keys inside tables and menus: in a table, Up/Down move to the same column's control in the row
 * above or below (Home/End with Ctrl: the first or last row); in a navigation menu, Left/Right/Up/Down and
 * Home/End move between its links. Tab still walks everything; text fields keep their own arrow keys.
 */
export function installKeyboardNavigation(): void {
  addEventListener('keydown', (e) => {
    if (e.altKey || e.metaKey || e.defaultPrevented) return;
    const el = e.target as HTMLElement | null;
    if (!el || el.isContentEditable) return;
    const checkbox = el.tagName === 'INPUT' && (el as HTMLInputElement).type === 'checkbox';
    if (!checkbox && /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName)) return;
    const nav = el.closest('nav');
    if (nav && el.tagName === 'A') {
      const links = [...nav.querySelectorAll<HTMLElement>('a[href]')];
      const i = links.indexOf(el);
      const to = { ArrowRight: i + 1, ArrowDown: i + 1, ArrowLeft: i - 1, ArrowUp: i - 1, Home: 0, End: links.length - 1 }[e.key];
      if (to === undefined) return;
      e.preventDefault();
      links[(to + links.length) % links.length]?.focus();
      return;
    }
    const cell = el.closest('td, th');
    const row = cell?.parentElement as HTMLTableRowElement | null;
    const body = row?.closest('table');
    if (!cell || !row || !body || !['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(e.key)) return;
    if ((e.key === 'Home' || e.key === 'End') && !e.ctrlKey) return;
    const rows = [...body.querySelectorAll<HTMLTableRowElement>('tbody > tr')].filter((r) => r.querySelector(FOCUSABLE));
    const column = [...row.children].indexOf(cell);
    const at = rows.indexOf(row);
    const target = e.key === 'Home' ? rows[0] : e.key === 'End' ? rows[rows.length - 1] : rows[at + (e.key === 'ArrowDown' ? 1 : -1)];
    if (!target || target === row) return;
    e.preventDefault();
    const sameColumn = target.children[column]?.querySelector<HTMLElement>(FOCUSABLE);
    (sameColumn ?? target.querySelector<HTMLElement>(FOCUSABLE))?.focus();
    target.scrollIntoView({ block: 'nearest' });
  });
}
