// The checks of `npm run docs:check`, as pure functions over markdown text: relative links and
// their anchors, the commands shown, and the gateway configs shown. scripts/check-docs.ts reads
// the files and runs them.
import { headingAnchor } from './config-docs.js';

export interface MarkdownFile {
  /** Path relative to the repository root, with "/" separators. */
  readonly path: string;
  readonly text: string;
}

export interface CodeBlock {
  readonly lang: string;
  readonly text: string;
  readonly line: number;
}

/** What a markdown file holds, as far as the checks care. */
export interface ScannedMarkdown {
  readonly anchors: ReadonlySet<string>;
  readonly links: readonly { readonly target: string; readonly line: number }[];
  readonly codeBlocks: readonly CodeBlock[];
  readonly inlineCode: readonly { readonly text: string; readonly line: number }[];
}

/** The anchors of a file's headings, as GitHub names them (a repeated heading gets "-1", "-2", …). */
function anchorOf(heading: string, seen: Map<string, number>): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text
    .replace(/`/g, '');
  const base = headingAnchor(text);
  const count = seen.get(base) ?? 0;
  seen.set(base, count + 1);
  return count === 0 ? base : `${base}-${count}`;
}

export function scanMarkdown(text: string): ScannedMarkdown {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const links: { target: string; line: number }[] = [];
  const codeBlocks: CodeBlock[] = [];
  const inlineCode: { text: string; line: number }[] = [];
  let fence: { marker: string; lang: string; start: number; lines: string[] } | undefined;
  const lines = text.split('\n');
  for (const [i, line] of lines.entries()) {
    const fenceMatch = /^\s*(```+|~~~+)\s*([\w-]*)/.exec(line);
    if (fence) {
      if (fenceMatch && fenceMatch[1]!.startsWith(fence.marker) && line.trim() === fenceMatch[1]) {
        codeBlocks.push({ lang: fence.lang, text: fence.lines.join('\n'), line: fence.start });
        fence = undefined;
      } else fence.lines.push(line);
      continue;
    }
    if (fenceMatch) {
      fence = { marker: fenceMatch[1]!, lang: fenceMatch[2] ?? '', start: i + 1, lines: [] };
      continue;
    }
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) anchors.add(anchorOf(heading[1]!, seen));
    for (const m of line.matchAll(/`([^`]+)`/g)) inlineCode.push({ text: m[1]!, line: i + 1 });
    const prose = line.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      links.push({ target: m[1]!, line: i + 1 });
    }
  }
  return { anchors, links, codeBlocks, inlineCode };
}

/** Resolves `target` (relative to `from`'s folder) to a repository path and an anchor. */
export function resolveLink(from: string, target: string): { path: string; anchor: string | undefined } {
  const [file = '', anchor] = target.split('#', 2);
  if (file === '') return { path: from, anchor };
  const parts = from.split('/').slice(0, -1);
  for (const segment of file.split('/')) {
    if (segment === '..') parts.pop();
    else if (segment !== '.' && segment !== '') parts.push(segment);
  }
  return { path: parts.join('/'), anchor };
}

const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i;

/** Every relative link must name an existing file, and an anchor that file's headings define. */
export function checkLinks(
  file: MarkdownFile,
  scanned: ScannedMarkdown,
  exists: (path: string) => boolean,
  anchorsOf: (path: string) => ReadonlySet<string> | undefined,
): string[] {
  const problems: string[] = [];
  for (const { target, line } of scanned.links) {
    if (EXTERNAL.test(target)) continue;
    const { path, anchor } = resolveLink(file.path, target);
    if (!exists(path)) {
      problems.push(`${file.path}:${line}: link to a missing file: ${target}`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    const anchors = anchorsOf(path);
    if (anchors && !anchors.has(anchor)) {
      problems.push(`${file.path}:${line}: link to a missing anchor: ${target}`);
    }
  }
  return problems;
}

/** The `tollgate` subcommands and, per subcommand, its usage lines (from `tollgate --help`). */
export type CliUsage = ReadonlyMap<string, readonly string[]>;

export function parseUsage(help: string): CliUsage {
  const usage = new Map<string, string[]>();
  for (const m of help.matchAll(/^\s*tollgate\s+(\S+)\s*(.*)$/gm)) {
    usage.set(m[1]!, [...(usage.get(m[1]!) ?? []), m[2]!.trim()]);
  }
  return usage;
}

/** The commands a snippet shows: code lines (not comments or output) and inline code. */
function commandLines(scanned: ScannedMarkdown): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [...scanned.inlineCode];
  for (const block of scanned.codeBlocks) {
    if (!['sh', 'bash', 'console', 'shell', ''].includes(block.lang)) continue;
    block.text.split('\n').forEach((text, i) => {
      const trimmed = text.trim();
      if (trimmed === '' || trimmed.startsWith('#')) return;
      out.push({ text: trimmed.replace(/^\$\s+/, ''), line: block.line + 1 + i });
    });
  }
  return out;
}

/**
 * Every `npm run X`, `npm start` / `npm test` must be a script of package.json; every
 * `tollgate X` / `node dist/cli.js X` a subcommand of the usage, with its action word and long
 * options; every `npx vitest run FILE` an existing file.
 */
export function checkCommands(
  file: MarkdownFile,
  scanned: ScannedMarkdown,
  scripts: ReadonlySet<string>,
  usage: CliUsage,
  exists: (path: string) => boolean,
): string[] {
  const problems: string[] = [];
  for (const { text, line } of commandLines(scanned)) {
    const at = `${file.path}:${line}`;
    for (const m of text.matchAll(/\bnpm\s+(?:run(?:-script)?\s+([\w:.-]+)|(start|test)\b)/g)) {
      const script = m[1] ?? m[2]!;
      if (!scripts.has(script)) problems.push(`${at}: npm script "${script}" does not exist: ${text}`);
    }
    for (const m of text.matchAll(
      /(?:(?<![\w/.-])tollgate|\bnode\s+dist\/cli\.js)[ \t]+([a-z][\w-]*)([^|;&#]*)/g,
    )) {
      const problem = checkCli(m[1]!, m[2]!.trim().split(/\s+/).filter(Boolean), usage);
      if (problem) problems.push(`${at}: ${problem}: ${text}`);
    }
    for (const m of text.matchAll(/\bnpx\s+vitest\s+run\s+(\S+\.ts)\b/g)) {
      if (!exists(m[1]!)) problems.push(`${at}: no test file ${m[1]}: ${text}`);
    }
  }
  return problems;
}

function checkCli(command: string, args: string[], usage: CliUsage): string | undefined {
  const lines = usage.get(command);
  if (!lines) return `"tollgate ${command}" is not in the CLI usage`;
  // The words a usage line allows first ("create", "revoke ID", "websites|reports|…").
  const firsts = lines.map((l) => l.split(/\s+/)[0] ?? '').filter((w) => /^[a-z][a-z|-]*$/.test(w));
  const action = args[0];
  if (firsts.length > 0 && action !== undefined && !action.startsWith('-') && !action.startsWith('…')) {
    const allowed = firsts.flatMap((w) => w.split('|'));
    if (!allowed.includes(action)) return `"tollgate ${command} ${action}" is not in the CLI usage`;
  }
  const options = new Set(lines.flatMap((l) => [...l.matchAll(/--[a-z-]+/g)].map((o) => o[0])));
  for (const arg of args) {
    const option = /^--[a-z-]+/.exec(arg)?.[0];
    if (option && !options.has(option)) return `"tollgate ${command}" has no option ${option}`;
  }
  return undefined;
}

/** The YAML blocks that are whole gateway configs (top-level `listeners:` and `routes:`). */
export function gatewayConfigs(scanned: ScannedMarkdown): CodeBlock[] {
  return scanned.codeBlocks.filter(
    (b) => ['yaml', 'yml'].includes(b.lang) && /^listeners:/m.test(b.text) && /^routes:/m.test(b.text),
  );
}

/** An environment for loading an example: variables referenced without a default get a placeholder. */
export function placeholderEnv(yaml: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of yaml.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g))
    env[m[1]!] = `example-${m[1]!.toLowerCase()}`;
  return env;
}
