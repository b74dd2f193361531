/** The timestamp every stored row uses: ISO-8601 UTC with milliseconds, as the APIs return it. */
export const nowIso = (): string => new Date().toISOString();
