// A strict parser of Structured Field Lists (RFC 9651 §4.2), for the items the rate-limit headers
// use: strings, integers, tokens, booleans and byte sequences, with parameters. No structured-headers
// package is installed; this follows the RFC's parsing algorithms step by step, and throws where
// they fail.

export type BareItem = string | number | boolean | Uint8Array | { readonly token: string };

export interface Item {
  readonly value: BareItem;
  readonly params: ReadonlyMap<string, BareItem>;
}

class Cursor {
  pos = 0;
  constructor(readonly text: string) {}
  get done(): boolean {
    return this.pos >= this.text.length;
  }
  peek(): string {
    return this.text[this.pos] ?? '';
  }
  fail(what: string): never {
    throw new Error(`structured field: ${what} at ${this.pos} in ${JSON.stringify(this.text)}`);
  }
}

/** Parses a List field value whose members are all Items (no Inner Lists). */
export function parseList(field: string): Item[] {
  const c = new Cursor(field.replace(/^ +| +$/g, ''));
  const members: Item[] = [];
  while (!c.done) {
    members.push(parseItem(c));
    while (c.peek() === ' ' || c.peek() === '\t') c.pos++;
    if (c.done) return members;
    if (c.peek() !== ',') c.fail('expected ","');
    c.pos++;
    while (c.peek() === ' ' || c.peek() === '\t') c.pos++;
    if (c.done) c.fail('trailing ","');
  }
  return members;
}

function parseItem(c: Cursor): Item {
  const value = parseBareItem(c);
  const params = new Map<string, BareItem>();
  while (c.peek() === ';') {
    c.pos++;
    while (c.peek() === ' ') c.pos++;
    const key = parseKey(c);
    let v: BareItem = true;
    if (c.peek() === '=') {
      c.pos++;
      v = parseBareItem(c);
    }
    params.set(key, v);
  }
  return { value, params };
}

function parseKey(c: Cursor): string {
  if (!/[a-z*]/.test(c.peek())) c.fail('a key must start with a-z or "*"');
  const start = c.pos;
  while (/[a-z0-9_\-.*]/.test(c.peek()) && !c.done) c.pos++;
  return c.text.slice(start, c.pos);
}

function parseBareItem(c: Cursor): BareItem {
  const ch = c.peek();
  if (ch === '-' || /[0-9]/.test(ch)) return parseInteger(c);
  if (ch === '"') return parseString(c);
  if (ch === ':') return parseBytes(c);
  if (ch === '?') return parseBoolean(c);
  if (/[A-Za-z*]/.test(ch)) return parseToken(c);
  return c.fail('no bare item');
}

function parseInteger(c: Cursor): number {
  const m = /^-?[0-9]{1,15}/.exec(c.text.slice(c.pos));
  if (!m) return c.fail('bad integer');
  c.pos += m[0].length;
  if (c.peek() === '.') c.fail('decimals are not expected here');
  if (/[0-9]/.test(c.peek())) c.fail('integer longer than 15 digits');
  return Number(m[0]);
}

function parseString(c: Cursor): string {
  c.pos++;
  let out = '';
  for (;;) {
    if (c.done) c.fail('unterminated string');
    const ch = c.peek();
    c.pos++;
    if (ch === '"') return out;
    if (ch === '\\') {
      if (c.peek() !== '"' && c.peek() !== '\\') c.fail('bad escape');
      out += c.peek();
      c.pos++;
    } else if (ch < ' ' || ch > '~') c.fail('non-printable character in string');
    else out += ch;
  }
}

function parseBytes(c: Cursor): Uint8Array {
  c.pos++;
  const end = c.text.indexOf(':', c.pos);
  if (end === -1) c.fail('unterminated byte sequence');
  const b64 = c.text.slice(c.pos, end);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 !== 0) c.fail('bad base64');
  c.pos = end + 1;
  return new Uint8Array(Buffer.from(b64, 'base64'));
}

function parseBoolean(c: Cursor): boolean {
  c.pos++;
  const ch = c.peek();
  if (ch !== '0' && ch !== '1') c.fail('bad boolean');
  c.pos++;
  return ch === '1';
}

function parseToken(c: Cursor): { token: string } {
  const m = /^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*/.exec(c.text.slice(c.pos))!;
  c.pos += m[0].length;
  return { token: m[0] };
}
