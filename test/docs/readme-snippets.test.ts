import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * README snippets come from runnable examples (CI executes every example): a snippet marked
 * `<!-- snippet: FILE -->` must equal FILE's `#region readme` block, so the docs cannot drift.
 */
const root = new URL('../../', import.meta.url);
// The docs whose snippets carry both markers (docs/latency.md's are checked by snippets.test.ts).
const docs = ['README.md', 'docs/guide.md', 'docs/http.md', 'docs/fleet.md'];

function snippets(markdown: string): Array<{ file: string; code: string }> {
  const found: Array<{ file: string; code: string }> = [];
  const pattern = /<!-- snippet: (\S+) -->\n```\w*\n([\s\S]*?)```\n<!-- \/snippet -->/g;
  for (const m of markdown.matchAll(pattern)) found.push({ file: m[1] as string, code: m[2] as string });
  return found;
}

function region(source: string): string {
  const m = /\/\/ #region readme\n([\s\S]*?)\/\/ #endregion/.exec(source);
  if (!m) throw new Error('no `// #region readme` block');
  return m[1] as string;
}

describe('documentation snippets', () => {
  for (const doc of docs) {
    it(`${doc}: every snippet matches its example file`, () => {
      // A doc that went missing, or lost its markers, fails here rather than checking nothing.
      const found = snippets(readFileSync(new URL(doc, root), 'utf8'));
      expect(found.length).toBeGreaterThan(0);
      for (const s of found) {
        expect(s.code, `${doc} ← ${s.file}`).toBe(region(readFileSync(new URL(s.file, root), 'utf8')));
      }
    });
  }
});
