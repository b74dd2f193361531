/** One schema step, applied once in one transaction when the file's user_version is below `version`. */
export interface Migration {
  readonly version: number;
  readonly sql: string;
}
