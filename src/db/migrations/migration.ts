/** One schema step: its version (the order it runs in) and its SQL. */
export interface Migration {
  readonly version: number;
  readonly sql: string;
}
