/** One problem in a config file, located by field path (and, once formatted, by line and column). */
export interface ConfigIssue {
  readonly path: readonly (string | number)[];
  readonly message: string;
  readonly line?: number;
  readonly col?: number;
}

export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly issues: readonly ConfigIssue[],
  ) {
    super(issues.map((i) => formatIssue(file, i)).join('\n'));
    this.name = 'ConfigError';
  }
}

export function formatPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? p : `.${p}`;
  return out || '(root)';
}

export function formatIssue(file: string, issue: ConfigIssue): string {
  const where = issue.line === undefined ? file : `${file}:${issue.line}:${issue.col ?? 1}`;
  return `${where}: ${formatPath(issue.path)}: ${issue.message}`;
}
