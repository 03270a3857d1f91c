/**
 * The API's paths and errors as the console sees them, DOM-free (the unit tests run it in Node).
 */

/** A failed API call: the problem's title and detail, and its whole body for pages that read more of it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(detail ? `${title}: ${detail}` : title);
  }
}

/** Encodes each segment of a path, e.g. `p('/adapters', name, 'stop')`. */
export const p = (...segments: string[]): string =>
  segments
    .map((segment, index) => {
      if (index === 0) return segment;
      // `.` and `..` stay dot segments however encoded, and the browser would resolve them.
      if (segment === '.' || segment === '..') throw new ApiError(404, 'Not Found', `"${segment}" is not a name or an id.`);
      return encodeURIComponent(segment);
    })
    .join('/');
