/** Building blocks every page uses: the page frame, loading, errors, confirmations and small formatters. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';
import { currentSession } from './auth.js';

let focusOnNextHeading = false;

/** Marks that the route changed: the next page heading takes the focus, so keyboard and screen-reader users start there. */
export const headingFocusPending = (): void => {
  focusOnNextHeading = true;
};

/** A page: its one `<h1>` (focused after a navigation) and its content. */
export const Page = ({ title, children }: { title: string; children?: ComponentChildren }) => {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (focusOnNextHeading && heading.current) {
      focusOnNextHeading = false;
      heading.current.focus();
    }
  }, [title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1} ref={heading}>
        {title}
      </h1>
      {children}
    </section>
  );
};

/** Whether the signed-in user may take admin actions (the API checks again on every call). */
export const isAdmin = (): boolean => currentSession()?.roles.includes('admin') ?? false;

/** What {@link useLoad} answers: the data once loaded, the error if it failed, and a way to load again. */
export interface Loaded<T> {
  readonly data?: T;
  readonly error?: unknown;
  readonly loading: boolean;
  readonly reload: () => void;
}

/** Loads data for a page when `deps` change (or on `reload`); a newer load wins over an older one still running. */
export const useLoad = <T,>(load: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[]): Loaded<T> => {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [generation, setGeneration] = useState(0);
  const shown = useRef<unknown[]>([...deps]);
  useEffect(() => {
    const controller = new AbortController();
    // A reload keeps showing what it replaces; other data (another device, tree…) must not show under the new heading.
    const same = deps.length === shown.current.length && deps.every((dep, index) => Object.is(dep, shown.current[index]));
    shown.current = [...deps];
    setState((previous) => (same ? { ...previous, loading: true } : { loading: true }));
    load(controller.signal).then(
      (data) => controller.signal.aborted || setState({ data, loading: false }),
      (error: unknown) => controller.signal.aborted || setState({ error, loading: false }),
    );
    return () => controller.abort();
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  return { ...state, reload };
};

/** Calls `reload` after `ms` while `active` (a batch or run still going), again after each load. */
export const useRefreshWhile = (active: boolean, reload: () => void, loadedAt: unknown, ms = 5000): void => {
  useEffect(() => {
    if (!active) return;
    const timer = setTimeout(reload, ms);
    return () => clearTimeout(timer);
  }, [active, reload, loadedAt, ms]);
};

/** An error shown as the problem's title and detail, in an alert region. */
export const ErrorAlert = ({ error }: { error: unknown }) => {
  const title = error instanceof ApiError ? error.title : 'Something went wrong';
  const detail = error instanceof ApiError ? error.detail : error instanceof Error ? error.message : String(error);
  return (
    <div role="alert" class="alert">
      <p class="alert-title">{title}</p>
      {detail && <p>{detail}</p>}
    </div>
  );
};

/** The loading line, the error, or the content once `loaded.data` is there. */
export const Loading = <T,>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ComponentChildren }) => {
  if (loaded.error !== undefined) return <ErrorAlert error={loaded.error} />;
  if (loaded.data === undefined) return <p class="muted">Loading…</p>;
  return <>{children(loaded.data)}</>;
};

/**
 * A button opening a native modal `<dialog>` that asks to confirm an action: its heading, the
 * `children` (a form's fields or a sentence), "Confirm" and "Cancel". Confirm runs `onConfirm`;
 * its error stays in the dialog, its success closes it and calls `onDone` with the answer.
 */
export const ConfirmAction = <T,>({
  label,
  heading,
  children,
  onConfirm,
  onDone,
  danger = false,
}: {
  label: string;
  heading: string;
  children?: ComponentChildren;
  onConfirm: (form: FormData) => Promise<T>;
  onDone?: (result: T) => void;
  danger?: boolean;
}) => {
  const dialog = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const headingId = useRef(`dialog-${Math.random().toString(36).slice(2)}`).current;
  const close = () => {
    setError(undefined);
    dialog.current?.close();
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const result = await onConfirm(new FormData(event.currentTarget as HTMLFormElement));
      close();
      onDone?.(result);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" class={danger ? 'button danger' : 'button'} onClick={() => dialog.current?.showModal()}>
        {label}
      </button>
      <dialog ref={dialog} aria-labelledby={headingId} onClose={() => setError(undefined)}>
        <form onSubmit={submit}>
          <h2 id={headingId}>{heading}</h2>
          {children}
          {error !== undefined && <ErrorAlert error={error} />}
          <div class="dialog-buttons">
            <button type="submit" class={danger ? 'button danger' : 'button'} disabled={busy}>
              Confirm
            </button>
            <button type="button" class="button secondary" onClick={close}>
              Cancel
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
};

/** A timestamp as the reader's local date and time (the ISO value in `datetime`). */
export const When = ({ at }: { at?: string }) =>
  at ? <time dateTime={at}>{new Date(at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}</time> : <span>—</span>;

/** A grade as a labelled badge (its text, not only its colour, says the grade). */
export const GradeBadge = ({ grade }: { grade: string }) => <span class={`grade grade-${grade}`}>{grade}</span>;

/**
 * A box that scrolls sideways when its table is wider than the screen (a phone). It takes the
 * keyboard focus so keyboard users can scroll it too, even when the table holds no link.
 */
export const ScrollBox = ({ label, class: extra, children }: { label?: string; class?: string; children: ComponentChildren }) => (
  // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard (WCAG 2.1.1).
  <div class={extra ? `table-scroll ${extra}` : 'table-scroll'} tabIndex={0} {...(label ? { role: 'region', 'aria-label': label } : {})}>
    {children}
  </div>
);

/**
 * A labelled control whose label names it alone: a label wrapped around a select would name it
 * with the text of every option too. `control` renders the control with the id the label points at.
 */
export const Field = ({ label, children: control }: { label: string; children: (id: string) => ComponentChildren }) => {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {control(id)}
    </div>
  );
};
