// Executable walkthroughs, the pure half: a markdown file's ```sh blocks become steps (commands,
// each with the output shown under it), and a shown output becomes a matcher for the real one.
// The marking convention is documented in CONTRIBUTING.md ("Executable walkthroughs").

export interface Command {
  /** Line of the command's first line in its file (1-based). */
  readonly line: number;
  /** The command as a reader pastes it (continuation lines joined by "\n"). */
  readonly text: string;
  /** The output lines shown under it (without "# "), or none: then it is run, not compared. */
  readonly expected: readonly string[] | undefined;
  /** Ends with `&`: runs in the background; its output is compared at the end of the block. */
  readonly background: boolean;
  /** "# within N s" on the command: retried until its output matches, for up to about N s. */
  readonly within: number | undefined;
}

export type Step =
  | { readonly kind: 'block'; readonly line: number; readonly commands: readonly Command[] }
  | { readonly kind: 'skip'; readonly line: number; readonly reason: string }
  | { readonly kind: 'restart'; readonly line: number; readonly env: Readonly<Record<string, string>> }
  | { readonly kind: 'first'; readonly line: number; readonly path: string };

const DIRECTIVE = /^<!--\s*walkthrough:\s*(\w+)\s*(.*?)\s*-->\s*$/;

/** The walkthrough steps of a markdown file, in order; a bad directive throws with its line. */
export function walkthroughSteps(path: string, text: string): Step[] {
  const steps: Step[] = [];
  const lines = text.split('\n');
  let skip: { line: number; reason: string } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const directive = DIRECTIVE.exec(line.trim());
    if (directive) {
      const [, verb, rest = ''] = directive;
      const at = i + 1;
      if (verb === 'skip') {
        if (rest === '') throw new Error(`${path}:${at}: "walkthrough: skip" must say why`);
        skip = { line: at, reason: rest };
      } else if (verb === 'restart') steps.push({ kind: 'restart', line: at, env: parseEnv(path, at, rest) });
      else if (verb === 'first') steps.push({ kind: 'first', line: at, path: rest });
      else throw new Error(`${path}:${at}: unknown walkthrough directive "${verb}"`);
      continue;
    }
    const fence = /^(```+|~~~+)\s*([\w-]*)\s*$/.exec(line);
    if (!fence) continue;
    const body: string[] = [];
    const start = i + 1;
    for (i++; i < lines.length && lines[i]!.trim() !== fence[1]; i++) body.push(lines[i]!);
    if (fence[2] !== 'sh') continue;
    if (skip) steps.push({ kind: 'skip', line: skip.line, reason: skip.reason });
    else steps.push({ kind: 'block', line: start, commands: parseBlock(body, start + 1) });
    skip = undefined;
  }
  return steps;
}

function parseEnv(path: string, line: number, text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of text.split(/\s+/).filter(Boolean)) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(pair);
    if (!m) throw new Error(`${path}:${line}: "walkthrough: restart" takes NAME=value pairs, not "${pair}"`);
    env[m[1]!] = m[2]!;
  }
  return env;
}

interface Building {
  line: number;
  text: string;
  expected: string[] | undefined;
  background: boolean;
  within: number | undefined;
}

/**
 * A block's commands. A line starting with "#" after a command is its output ("#" alone: a blank
 * line; "#  " with exactly two spaces continues the line above, for long JSON; more spaces are an
 * indented output line). "# &" starts the shown
 * output of the block's background command. "#" lines before the first command are prose.
 */
function parseBlock(body: readonly string[], firstLine: number): Command[] {
  const commands: Building[] = [];
  let target: Building | undefined;
  for (let j = 0; j < body.length; j++) {
    const raw = body[j]!;
    if (raw.startsWith('#')) {
      if (!target) continue;
      if (raw.startsWith('# &')) {
        target = commands.find((c) => c.background);
        if (!target) throw new Error(`line ${firstLine + j}: "# &" but no background command in the block`);
        target.expected ??= [];
        continue;
      }
      const out = (target.expected ??= []);
      const content = raw.replace(/^# ?/, '');
      if (/^# {2}\S/.test(raw) && out.length > 0) out[out.length - 1] += content.trimStart();
      else out.push(content);
      continue;
    }
    if (raw.trim() === '') continue;
    let text = raw;
    const line = firstLine + j;
    while (text.endsWith('\\') && j + 1 < body.length) text += `\n${body[++j]!}`;
    const code = withoutComment(text);
    const within = /#.*\bwithin (\d+) s\b/.exec(text.slice(code.length));
    target = {
      line,
      text,
      expected: undefined,
      background: /&$/.test(code.trimEnd()) && !/&&$/.test(code.trimEnd()),
      within: within ? Number(within[1]) : undefined,
    };
    commands.push(target);
  }
  return commands;
}

/** A command without its trailing shell comment (a "#" outside quotes, after a blank). */
/** The first API key in a text. Not `\b` at its end: a key may end in "-", and "-" then a newline is no word boundary. */
export function findApiKey(text: string): string | undefined {
  return /\btg_[\w-]{32}(?![\w-])/.exec(text)?.[0];
}

export function withoutComment(text: string): string {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"') i++;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '\\') i++;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) return text.slice(0, i).trimEnd();
  }
  return text;
}

/**
 * Values that differ from run to run. In a shown output each is masked: the real output may hold
 * any value of that kind there. Those marked `carry` are remembered (shown value -> real value)
 * and replaced in later commands, as a reader pastes their own token where the doc shows one.
 */
const MASKS: readonly { readonly shown: string; readonly real: string; readonly carry: boolean }[] = [
  // A JWT, possibly cut with "…" in the doc.
  {
    shown: String.raw`eyJ[\w-]*(?:\.[\w-]*){0,2}…?`,
    real: String.raw`eyJ[\w-]*\.[\w-]*\.[\w-]*`,
    carry: true,
  },
  // A workspace token (id|secret) and an API key.
  { shown: String.raw`\b[0-9a-f]{12}\|[\w-]{40}`, real: String.raw`[0-9a-f]{12}\|[\w-]{40}`, carry: true },
  { shown: String.raw`\btg_[\w-]{32}(?![\w-])`, real: String.raw`tg_[\w-]{32}`, carry: true },
  {
    shown: String.raw`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`,
    real: String.raw`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`,
    carry: true,
  },
  {
    shown: String.raw`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z`,
    real: String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z`,
    carry: false,
  },
  { shown: String.raw`\b\d{4}-\d\d-\d\d\b`, real: String.raw`\d{4}-\d\d-\d\d`, carry: false },
  // A token id, and Unix times in seconds or milliseconds (rate-limit resets, cookie expiries).
  { shown: String.raw`\b[0-9a-f]{12}\b`, real: String.raw`[0-9a-f]{12}`, carry: true },
  { shown: String.raw`\b1[6-9]\d{8}(?:\d{3})?\b`, real: String.raw`\d{10}(?:\d{3})?`, carry: false },
  // An HTTP date (the Date header).
  {
    shown: String.raw`\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT`,
    real: String.raw`\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT`,
    carry: false,
  },
  // What remains of a rate-limit window: a window may roll over while a walkthrough runs.
  { shown: String.raw`(?<=ratelimit-remaining: )\d+`, real: String.raw`\d+`, carry: false },
  // A value cut with "…" (a signature, a secret): any value there.
  { shown: String.raw`[\w.+/-]+…`, real: String.raw`[^\s;,"'&]*`, carry: false },
];
const ANY_MASK = new RegExp(MASKS.map((m) => `(${m.shown})`).join('|'), 'g');

export interface Matcher {
  readonly regex: RegExp;
  /** For each capture group of `regex`: the value shown in the doc, when it is carried. */
  readonly carried: readonly (string | undefined)[];
  /** The shown output, normalised as the real one is. */
  readonly shown: string;
}

/** Lines of output compared: CRLF and trailing blanks dropped, blank lines dropped. */
export function normaliseOutput(text: string): string {
  return text
    .replace(/\r/g, '')
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l !== '')
    .join('\n');
}

/** A note in a shown output line, after two blanks, in parentheses: not output. */
const NOTE = /\s{2,}\(.*\)\s*$/;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function matcherFor(expected: readonly string[]): Matcher {
  const shown = normaliseOutput(expected.map((l) => l.replace(NOTE, '')).join('\n'));
  let source = '';
  const carried: (string | undefined)[] = [];
  let last = 0;
  const literal = (s: string) => s.split('…').map(escape).join('[\\s\\S]*?');
  for (const m of shown.matchAll(ANY_MASK)) {
    const index = m.slice(1).findIndex((g) => g !== undefined);
    const mask = MASKS[index]!;
    source += literal(shown.slice(last, m.index)) + `(${mask.real})`;
    carried.push(mask.carry ? m[0] : undefined);
    last = m.index + m[0].length;
  }
  source += literal(shown.slice(last));
  // A line that is "…" alone stands for any lines, none included.
  const anyLines = '[\\s\\S]*?';
  source = source
    .split(`\n${anyLines}\n`)
    .join(`(?:\n${anyLines})?\n`)
    .replace(new RegExp(`^${escape(anyLines)}\n`), `(?:${anyLines}\n)?`)
    .replace(new RegExp(`\n${escape(anyLines)}$`), `(?:\n${anyLines})?`);
  return { regex: new RegExp(`^${source}$`), carried, shown };
}

/** Whether the real output matches; with the carried values (shown -> real) it holds. */
export function matchOutput(matcher: Matcher, real: string): Map<string, string> | undefined {
  const m = matcher.regex.exec(normaliseOutput(real));
  if (!m) return undefined;
  const carry = new Map<string, string>();
  matcher.carried.forEach((shown, i) => {
    if (shown === undefined || m[i + 1] === undefined) return;
    // A value cut with "…" is carried as shown (the reader pastes it so) and uncut.
    carry.set(shown, m[i + 1]!);
    if (shown.endsWith('…')) carry.set(shown.slice(0, -1), m[i + 1]!);
  });
  return carry;
}

/** The first shown line that the real output lacks (in order), for a precise failure message. */
export function firstMissingLine(
  matcher: Matcher,
  real: string,
): { index: number; line: string } | undefined {
  const realLines = normaliseOutput(real).split('\n');
  let at = 0;
  const lines = matcher.shown.split('\n');
  for (const [index, line] of lines.entries()) {
    if (line === '…') continue; // any lines, none included
    const one = matcherFor([line]);
    const found = realLines.findIndex((r, k) => k >= at && one.regex.test(r));
    if (found === -1) return { index, line };
    at = found + 1;
  }
  return undefined;
}
