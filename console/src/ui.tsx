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
      <strong>{problem?.title ?? 'Error'}</strong> {error instanceof Error ? error.message : String(error)}
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
export function Dialog(props: { title: string; open: boolean; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-label={props.title} onClose={props.onClose}>
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
