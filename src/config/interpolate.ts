/** `${VAR}` and `${VAR:-default}` references; `$${` escapes a literal "${". */
const REFERENCE = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export class MissingVariableError extends Error {}

/** Replaces references from `env`. An unset variable without a default is an error. */
export function interpolate(text: string, env: NodeJS.ProcessEnv): string {
  return text.replace(REFERENCE, (whole, name: string | undefined, fallback: string | undefined) => {
    if (whole === '$${') return '${';
    const value = env[name!];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    if (value === '') return '';
    throw new MissingVariableError(`environment variable ${name} is not set and has no default`);
  });
}

/** True when the text is one reference and nothing else, so its value may be typed (number, boolean). */
export function isWholeReference(text: string): boolean {
  return /^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$/.test(text);
}
