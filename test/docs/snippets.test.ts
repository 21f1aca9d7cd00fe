import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type Snippet, snippetsOf, sourceProblems, typeProblems } from './snippets.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
// The docs a newcomer reads first. docs/observability.md has its own check (test/examples.test.ts).
const docs = ['README.md', 'docs/guide.md', 'docs/http.md', 'docs/simulator.md', 'docs/latency.md'];
const all: Snippet[] = docs.flatMap((doc) => snippetsOf(doc, readFileSync(`${root}${doc}`, 'utf8')));
const where = (s: Snippet) => `${s.doc}:${s.line}${s.source === undefined ? '' : ` (${s.source})`}`;

describe('documentation snippets', () => {
  it('finds the snippets of the README and the guides', () => {
    expect(all.filter((s) => s.doc === 'README.md').length).toBeGreaterThan(0);
    expect(all.filter((s) => s.doc === 'docs/http.md').length).toBeGreaterThanOrEqual(6);
    expect(all.filter((s) => s.doc === 'docs/guide.md').length).toBeGreaterThanOrEqual(15);
  });

  it('every snippet is copied from a runnable example', () => {
    const problems = all.flatMap((s) => sourceProblems(s, root).map((p) => `${where(s)}: ${p}`));
    expect(problems).toEqual([]);
  });

  it('every snippet shows its imports and type-checks on its own under --strict', () => {
    const results = typeProblems(
      all.map((s) => s.code),
      `${root}.tmp/snippets`,
    );
    const problems = results.flatMap((list, i) => list.map((p) => `${where(all[i]!)}: ${p}`));
    expect(problems).toEqual([]);
  });

  it('the check fails a snippet without imports or with undefined names', () => {
    const [withoutImports, undefinedNames, fine] = typeProblems(
      [
        "const api = downstream('inventory');\nawait api.fetch('http://localhost/');\nexport {};\n",
        "import { createFetch } from 'kindly-calls/http';\nconst stock = await createFetch(inventory)(`${base}/stock`);\nconsole.log(stock.status);\n",
        "import { downstream } from 'kindly-calls';\nconst api = downstream('inventory');\nconsole.log(api.name);\n",
      ],
      `${root}.tmp/snippets-self-test`,
    );
    expect(withoutImports).toEqual(expect.arrayContaining(['shows no import', "line 1: Cannot find name 'downstream'."]));
    expect(undefinedNames).toEqual(["line 2: Cannot find name 'inventory'.", "line 2: Cannot find name 'base'."]);
    expect(fine).toEqual([]);
  });

  it('an unmarked block, or one that drifted from its example, is reported', () => {
    const [unmarked] = snippetsOf('x.md', '```ts\nconsole.log(1);\n```\n');
    expect(sourceProblems(unmarked!, root)).toEqual([expect.stringContaining('not marked')]);
    const [drifted] = snippetsOf('x.md', '<!-- snippet: examples/quick-start.ts -->\n```ts\nconsole.log(1);\n```\n');
    expect(sourceProblems(drifted!, root)).toEqual(['differs from the region in examples/quick-start.ts']);
  });
});
