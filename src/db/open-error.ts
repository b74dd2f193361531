/**
 * The services' database could not be opened (not a database, unreadable, a newer schema…). Kept
 * apart from database.ts so the CLI can name it without loading SQLite in a pure proxy.
 */
export class DatabaseOpenError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`cannot open the database ${file}: ${reason}`);
    this.name = 'DatabaseOpenError';
  }
}
