/** Field name → messages, as the Laravel originals report a validation failure. */
export type FieldErrors = Record<string, string[]>;

/** An error a service answers with; each surface renders it in its own JSON shape. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code = 'error',
    readonly fields?: FieldErrors,
    /** Response headers of this answer (Retry-After of a 429 or 507). */
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(message);
  }

  /**
   * SQLite could not write (SQLITE_FULL: the disk or the database's size bound): 507, and the
   * transaction was rolled back, so nothing stored before is touched.
   */
  static storageFull(): HttpError {
    return new HttpError(507, STORAGE_FULL, 'storage_full', undefined, { 'retry-after': '60' });
  }

  static validation(fields: FieldErrors): HttpError {
    return new HttpError(422, 'The given data was invalid.', 'validation_failed', fields);
  }

  static field(field: string, message: string): HttpError {
    return HttpError.validation({ [field]: [message] });
  }
}

/** How a surface writes its errors. */
export type ErrorStyle = (error: HttpError) => object;

/**
 * The websites and reports APIs (Laravel): `{"message":…,"status":n}`, field errors under
 * `message`, and 401 as `{"message":"Unauthenticated."}` alone.
 */
export const laravelErrors: ErrorStyle = (e) => {
  if (e.status === 401) return { message: 'Unauthenticated.' };
  return { message: e.fields ?? e.message, status: e.status };
};

/** The widget and bulk-sync endpoints: `{"error":{"code","message"}}`, with `fields` on a 422. */
export const widgetErrors: ErrorStyle = (e) => ({
  error: { code: e.code, message: e.message, ...(e.fields ? { fields: e.fields } : {}) },
});

export const NOT_FOUND = 'Resource not found.';
export const STORAGE_FULL = 'The server is out of storage space. Please try again later.';
