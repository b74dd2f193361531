// `npm run docs:check`: README.md, CONTRIBUTING.md and docs/**/*.md. Relative links and anchors
// resolve, README.md stays under 12 KB, every `npm run …` and `tollgate …` command shown exists,
// and every YAML block that is a whole gateway config loads. Then every walkthrough runs (its ```sh
// blocks, against a fresh gateway of its own) and each output shown is compared with the real one
// (CONTRIBUTING.md, "Executable walkthroughs"); `npm run docs:check -- FILE…` runs only those
// files' walkthroughs. Needs dist/ built. Exits 1 listing each problem.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../src/config/errors.js';
import { loadConfigText } from '../src/rules/load.js';
import {
  checkCommands,
  checkLinks,
  gatewayConfigs,
  parseUsage,
  placeholderEnv,
  scanMarkdown,
  type MarkdownFile,
  type ScannedMarkdown,
} from './docs-lint.js';
import { runWalkthrough, type WalkthroughResult } from './walkthrough/run.js';

export const README_MAX_BYTES = 12 * 1024;

const root = fileURLToPath(new URL('..', import.meta.url));
const at = (path: string) => join(root, path);

function markdownUnder(folder: string): string[] {
  return readdirSync(at(folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const files: MarkdownFile[] = ['README.md', 'CONTRIBUTING.md', ...markdownUnder('docs')].map((path) => ({
  path,
  text: readFileSync(at(path), 'utf8'),
}));
const scanned = new Map<string, ScannedMarkdown>(files.map((f) => [f.path, scanMarkdown(f.text)]));

const exists = (path: string) => existsSync(at(path));
const anchorsOf = (path: string) => {
  if (!path.endsWith('.md') || !exists(path) || statSync(at(path)).isDirectory()) return undefined;
  let found = scanned.get(path);
  if (!found) scanned.set(path, (found = scanMarkdown(readFileSync(at(path), 'utf8'))));
  return found.anchors;
};

const scripts = new Set(
  Object.keys((JSON.parse(readFileSync(at('package.json'), 'utf8')) as { scripts: object }).scripts),
);
// The CLI's own usage text, from the source (no build needed).
const help = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--help'], {
  cwd: root,
  encoding: 'utf8',
});
if (help.status !== 0) throw new Error(`tollgate --help failed:\n${help.stderr}`);
const usage = parseUsage(help.stdout);

const problems: string[] = [];
const readmeBytes = Buffer.byteLength(files[0]!.text);
if (readmeBytes > README_MAX_BYTES) {
  problems.push(
    `README.md is ${readmeBytes} bytes; keep it under ${README_MAX_BYTES} (move detail to docs/)`,
  );
}
let configs = 0;
for (const file of files) {
  const found = scanned.get(file.path)!;
  problems.push(...checkLinks(file, found, exists, anchorsOf));
  problems.push(...checkCommands(file, found, scripts, usage, exists));
  for (const block of gatewayConfigs(found)) {
    configs++;
    try {
      loadConfigText(block.text, `${file.path}:${block.line}`, placeholderEnv(block.text));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(`${file.path}:${block.line}: the config example does not load:\n${err.message}`);
    }
  }
}

// Walkthroughs, WALKTHROUGHS_AT_ONCE files at a time (each has a gateway of its own).
const only = process.argv.slice(2);
const started = Date.now();
const queue = files.filter((f) => only.length === 0 || only.includes(f.path));
const results: WalkthroughResult[] = [];
const read = (path: string) => readFileSync(at(path), 'utf8');
const lanes = Array.from({ length: Number(process.env['WALKTHROUGHS_AT_ONCE'] ?? 4) }, async () => {
  for (let file = queue.shift(); file; file = queue.shift()) {
    results.push(await runWalkthrough(root, file.path, read));
  }
});
await Promise.all(lanes);
const order = files.map((f) => f.path);
results.sort((a, b) => order.indexOf(a.path) - order.indexOf(b.path));
// Every file's problems, also those of a walkthrough that failed before its first command.
for (const r of results) problems.push(...r.problems);
const walked = results.filter((r) => r.commands > 0);
const commands = walked.reduce((n, r) => n + r.commands, 0);
const compared = walked.reduce((n, r) => n + r.compared, 0);
const skipped = results.reduce((n, r) => n + r.skipped, 0);
const walkthroughs = `walkthroughs: ${walked.length} files, ${commands} commands, ${compared} outputs compared, ${skipped} blocks skipped, ${((Date.now() - started) / 1000).toFixed(1)} s`;

if (problems.length > 0) {
  console.error(problems.join('\n\n'));
  console.error(walkthroughs);
  console.error(`docs check: ${problems.length} problem(s)`);
  process.exit(1);
}
const links = [...scanned.values()].reduce((n, s) => n + s.links.length, 0);
console.log(
  `docs check: ${files.length} files, ${links} links, ${configs} config examples, README.md ${readmeBytes} bytes; ${walkthroughs}: ok`,
);
