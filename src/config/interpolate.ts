/**
 * `${VAR}` and `${VAR:-default}` references; `$${` escapes a literal "${". A default may hold
 * references of its own (`${A:-${B:-b}}`), read only when it is used. `${VAR.host}` is the host of
 * the URL in VAR (`${REPORTS_PUBLIC_URL.host:-analyzer.localhost}`), so that one setting can name a
 * host both as a URL and as a route's host.
 */

export class MissingVariableError extends Error {}

/** One reference: the variable, whether its URL's host is wanted, and the default's raw text. */
export interface Reference {
  readonly name: string;
  readonly host: boolean;
  readonly fallback: string | undefined;
}

type Piece = string | Reference;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/**
 * The reference starting at `${` at `start`, and the index after its closing `}`; undefined when
 * the text there is not a well-formed reference (it is then kept as written).
 */
function readReference(text: string, start: number): { ref: Reference; end: number } | undefined {
  const name = NAME.exec(text.slice(start + 2))?.[0];
  if (!name) return undefined;
  let i = start + 2 + name.length;
  const host = text.startsWith('.host', i);
  if (host) i += 5;
  if (text[i] === '}') return { ref: { name, host, fallback: undefined }, end: i + 1 };
  if (!text.startsWith(':-', i)) return undefined;
  i += 2;
  const from = i;
  // The default ends at the `}` that closes this reference: nested `${` open one level more.
  for (let depth = 0; i < text.length; i++) {
    if (text.startsWith('$${', i)) i += 2;
    else if (text.startsWith('${', i)) {
      depth++;
      i++;
    } else if (text[i] === '}') {
      if (depth === 0) return { ref: { name, host, fallback: text.slice(from, i) }, end: i + 1 };
      depth--;
    }
  }
  return undefined;
}

function pieces(text: string): Piece[] {
  const out: Piece[] = [];
  let literal = '';
  for (let i = 0; i < text.length;) {
    if (text.startsWith('$${', i)) {
      literal += '${';
      i += 3;
      continue;
    }
    const found = text.startsWith('${', i) ? readReference(text, i) : undefined;
    if (!found) {
      literal += text[i];
      i++;
      continue;
    }
    if (literal) out.push(literal);
    literal = '';
    out.push(found.ref);
    i = found.end;
  }
  if (literal) out.push(literal);
  return out;
}

/**
 * The host of the URL a variable holds (lower case, no port). A bad value is reported here, at the
 * first reference that needs its host, naming the variable an operator set.
 */
function hostOf(name: string, value: string): string {
  let host: string;
  try {
    host = new URL(value).hostname;
  } catch {
    host = '';
  }
  if (!host)
    throw new MissingVariableError(
      `environment variable ${name} is not a URL with a host: "${value}" (use e.g. https://api.example.com)`,
    );
  return host;
}

/** Replaces references from `env`. An unset variable without a default is an error. */
export function interpolate(text: string, env: NodeJS.ProcessEnv): string {
  return pieces(text)
    .map((piece) => {
      if (typeof piece === 'string') return piece;
      const value = env[piece.name];
      if (value !== undefined && value !== '') return piece.host ? hostOf(piece.name, value) : value;
      if (piece.fallback !== undefined) return interpolate(piece.fallback, env);
      if (value === '') return '';
      throw new MissingVariableError(`environment variable ${piece.name} is not set and has no default`);
    })
    .join('');
}

/** True when the text is one reference and nothing else, so its value may be typed (number, boolean). */
export function isWholeReference(text: string): boolean {
  const all = pieces(text);
  return all.length === 1 && typeof all[0] !== 'string';
}

/** Every reference in the text, those inside defaults included, in the order they are written. */
export function references(text: string): Reference[] {
  return pieces(text).flatMap((piece) =>
    typeof piece === 'string'
      ? []
      : [piece, ...(piece.fallback === undefined ? [] : references(piece.fallback))],
  );
}
