import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/**
 * Documentation snippets, checked two ways so the docs cannot drift and every snippet can be
 * pasted into a fresh file:
 *
 * 1. every TypeScript block of a doc is marked `<!-- snippet: examples/FILE.ts -->` (or
 *    `…FILE.ts#name`) and equals that example's `// #region readme` (or `// #region name`)
 *    block — and every example runs in test/examples.test.ts;
 * 2. every snippet, on its own, shows its imports and type-checks under `--strict`: a name it
 *    uses without declaring or importing (`base`, `paymentsUrl`) is an error.
 */
export interface Snippet {
  doc: string;
  /** `examples/FILE.ts` or `examples/FILE.ts#name`; undefined for an unmarked block. */
  source: string | undefined;
  code: string;
  line: number;
}

const BLOCK = /^```(ts|typescript|js|javascript|tsx)\n([\s\S]*?)^```$/gm;
const MARKER = /<!-- snippet: (\S+) -->\n$/;

export function snippetsOf(doc: string, markdown: string): Snippet[] {
  const found: Snippet[] = [];
  for (const m of markdown.matchAll(BLOCK)) {
    const before = markdown.slice(Math.max(0, (m.index ?? 0) - 200), m.index);
    const marker = MARKER.exec(before);
    const line = markdown.slice(0, m.index).split('\n').length;
    found.push({ doc, source: marker?.[1], code: m[2] as string, line });
  }
  return found;
}

/** The `// #region NAME` … `// #endregion` block of an example (NAME `readme` by default). */
export function regionOf(source: string, name = 'readme'): string | undefined {
  const open = `// #region ${name}\n`;
  const start = source.indexOf(open);
  if (start === -1) return undefined;
  const from = start + open.length;
  const end = source.indexOf('// #endregion', from);
  return end === -1 ? undefined : source.slice(from, end);
}

/** Problems of one snippet against its example (rule 1), relative to the repository `root`. */
export function sourceProblems(snippet: Snippet, root: string): string[] {
  if (snippet.source === undefined) {
    return ['not marked `<!-- snippet: examples/FILE.ts -->` (every snippet comes from an example that runs)'];
  }
  const [file, name] = snippet.source.split('#') as [string, string | undefined];
  let text: string;
  try {
    text = readFileSync(join(root, file), 'utf8');
  } catch {
    return [`${file} does not exist`];
  }
  const region = regionOf(text, name);
  if (region === undefined) return [`${file} has no \`// #region ${name ?? 'readme'}\` block`];
  return region === snippet.code ? [] : [`differs from the region in ${snippet.source}`];
}

/**
 * Type-checks each snippet as a module of its own (rule 2), in one TypeScript program.
 * `dir` must lie inside the package, so that `kindly-calls` resolves to this package's
 * exports as it does for a user. Returns the problems of each snippet, in order.
 */
export function typeProblems(snippets: readonly string[], dir: string): string[][] {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const files = snippets.map((code, i) => {
    const file = join(dir, `snippet-${i}.ts`);
    writeFileSync(file, code);
    return file;
  });
  try {
    const program = ts.createProgram(files, {
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ['node'],
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      esModuleInterop: true,
    });
    return files.map((file) => {
      const source = program.getSourceFile(file);
      if (source === undefined) return ['not compiled'];
      const out: string[] = [];
      if (!source.statements.some((s) => ts.isImportDeclaration(s))) out.push('shows no import');
      for (const d of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
        const at = d.start === undefined ? '' : `line ${source.getLineAndCharacterOfPosition(d.start).line + 1}: `;
        out.push(`${at}${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
      }
      return out;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
