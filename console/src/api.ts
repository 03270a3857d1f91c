/**
 * Calls to the service's API with the signed-in user's ID token. A failure becomes an
 * {@link ApiError} carrying the problem's title and detail (RFC 9457), which pages show in an
 * alert; a 401 sends the user to sign in again.
 */
import { apiBase, bearerToken, tokenRejected } from './auth.js';
import { ApiError } from './api-path.js';

export { ApiError, p } from './api-path.js';

/** A page of a listing: its items and the cursor of the next page, absent on the last. */
export interface Page<T> {
  readonly items: T[];
  readonly next?: string;
}

interface RequestOptions {
  readonly method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly body?: unknown;
  readonly query?: Record<string, string | undefined>;
  /** Send an Idempotency-Key, so a retried click cannot start the same work twice. */
  readonly idempotent?: boolean;
  readonly accept?: string;
}

/** The URL of an API path (segments already encoded) with a query. */
export const apiUrl = (path: string, query: Record<string, string | undefined> = {}): string => {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(key, value);
  const search = params.toString();
  return `${apiBase()}${path}${search ? `?${search}` : ''}`;
};

const problemOf = async (response: Response): Promise<ApiError> => {
  const text = await response.text().catch(() => '');
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') body = parsed as Record<string, unknown>;
  } catch {
    // Not JSON (a gateway's own page): the status line is all there is.
  }
  const title = typeof body['title'] === 'string' ? body['title'] : typeof body['message'] === 'string' ? body['message'] : `HTTP ${response.status}`;
  const detail = typeof body['detail'] === 'string' ? body['detail'] : response.statusText;
  return new ApiError(response.status, title, detail, body);
};

const send = async (path: string, options: RequestOptions): Promise<Response> => {
  const headers: Record<string, string> = { accept: options.accept ?? 'application/json' };
  const token = bearerToken();
  if (token) headers['authorization'] = `Bearer ${token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.idempotent) headers['idempotency-key'] = crypto.randomUUID();
  let response: Response;
  try {
    response = await fetch(apiUrl(path, options.query), {
      method: options.method ?? 'GET',
      headers,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
  } catch (error) {
    throw new ApiError(0, 'The API could not be reached', error instanceof Error ? error.message : String(error));
  }
  if (response.status === 401) {
    void tokenRejected();
    throw new ApiError(401, 'Signed out', 'The sign-in expired or was refused; signing in again.');
  }
  if (!response.ok) throw await problemOf(response);
  return response;
};

/** Calls the API and answers its JSON body. */
export const api = async <T>(path: string, options: RequestOptions = {}): Promise<T> => (await send(path, options)).json() as Promise<T>;

/** Calls the API and answers its body as text (a CSV, a unified diff). */
export const apiText = async (path: string, options: RequestOptions = {}): Promise<string> => (await send(path, options)).text();

/**
 * Reads a listing page by page, following `next`, calling `onPage` with everything read so far;
 * stops after `maxItems` or when `signal` aborts. Answers every item read.
 */
export const readAll = async <T>(
  path: string,
  query: Record<string, string | undefined>,
  options: { readonly onPage?: (items: readonly T[], more: boolean) => void; readonly maxItems?: number; readonly signal?: AbortSignal } = {},
): Promise<T[]> => {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    if (options.signal?.aborted) break;
    const page = await api<Page<T>>(path, { query: { ...query, ...(cursor ? { cursor } : {}) } });
    items.push(...page.items);
    cursor = page.next;
    if (options.maxItems !== undefined && items.length >= options.maxItems) cursor = undefined;
    options.onPage?.(items, cursor !== undefined);
  } while (cursor);
  return items;
};
