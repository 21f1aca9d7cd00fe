#!/usr/bin/env node
// Rewrites every `<!-- snippet: examples/FILE.ts[#name] -->` block of README.md and docs/*.md
// from the example's `// #region readme` (or `// #region name`) block, so that docs are edited
// in the example (which runs) and copied here. test/docs/snippets.test.ts checks the result.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const docs = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const pattern = /(<!-- snippet: (\S+) -->\n```(\w*)\n)[\s\S]*?(```\n<!-- \/snippet -->)/g;

let changed = 0;
for (const doc of docs) {
  const path = join(root, doc);
  const before = readFileSync(path, 'utf8');
  const after = before.replace(pattern, (_all, open, source, _lang, close) => {
    const [file, name = 'readme'] = source.split('#');
    const text = readFileSync(join(root, file), 'utf8');
    const start = text.indexOf(`// #region ${name}\n`);
    if (start === -1) throw new Error(`${doc}: ${file} has no "// #region ${name}"`);
    const from = start + `// #region ${name}\n`.length;
    return `${open}${text.slice(from, text.indexOf('// #endregion', from))}${close}`;
  });
  if (after !== before) {
    writeFileSync(path, after);
    changed++;
  }
}
console.log(`${changed} document(s) updated`);
