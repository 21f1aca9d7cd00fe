import { readdirSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'acorn';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a build script, plain JavaScript without declarations
import { withoutComments } from '../../scripts/strip-comments.mjs';

/**
 * The built ES modules carry no comments (scripts/strip-comments.mjs): Node reads and V8 scans
 * every byte of a module before it runs, and the comments were a quarter of the root chunk.
 * Annotations bundlers read stay, and the maps still lead to the right lines of `src/`.
 *
 * Needs dist/ built (`npm test` builds first).
 */
const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const esm = readdirSync(dist).filter((f) => f.endsWith('.js'));
const ANNOTATION = /^[!#@]|__PURE__|__NO_SIDE_EFFECTS__/;

function commentsOf(code: string): string[] {
  const found: string[] = [];
  parse(code, { ecmaVersion: 'latest', sourceType: 'module', onComment: (_b, text) => found.push(text.trim()) });
  return found;
}

describe('built ES modules', () => {
  it('have no comments but the annotations bundlers read, every file', () => {
    expect(esm.length).toBeGreaterThan(10);
    for (const f of esm) {
      const prose = commentsOf(readFileSync(join(dist, f), 'utf8')).filter((c) => !ANNOTATION.test(c));
      expect({ file: f, prose: prose.slice(0, 3) }).toEqual({ file: f, prose: [] });
    }
  });

  it('keep the pure annotations that let a bundler drop unused code', () => {
    const pure = esm.reduce((n, f) => n + (readFileSync(join(dist, f), 'utf8').match(/\/\* @__PURE__ \*\//g)?.length ?? 0), 0);
    expect(pure).toBeGreaterThan(20);
  });

  it('map every class of every chunk to the line of src/ that declares it', () => {
    let checked = 0;
    for (const f of esm) {
      const code = readFileSync(join(dist, f), 'utf8');
      const map = new SourceMap(JSON.parse(readFileSync(join(dist, `${f}.map`), 'utf8')));
      const lines = code.split('\n');
      lines.forEach((line, i) => {
        const m = /^(?:var (\w+) = class\b|class (\w+)\b)/.exec(line);
        if (m === null) return;
        const name = m[1] ?? m[2];
        const at = line.indexOf('class');
        const entry = map.findEntry(i, at) as { originalSource?: string; originalLine?: number };
        const source = resolve(dirname(join(dist, f)), entry.originalSource ?? '');
        const original = readFileSync(source, 'utf8').split('\n')[entry.originalLine ?? -1] ?? '';
        expect({ file: f, name, original: original.includes(`class ${name}`) }).toEqual({ file: f, name, original: true });
        checked++;
      });
    }
    expect(checked).toBeGreaterThan(80);
  });
});

describe('withoutComments', () => {
  it('drops comment lines whole and trailing comments with their spaces, and keeps annotations', () => {
    const code = [
      '// a line of prose',
      'const a = 1; // why',
      '  /* a block',
      '     of prose */',
      'const b = /* @__PURE__ */ make(); /*! licence */',
      '//# sourceMappingURL=x.js.map',
      '',
    ].join('\n');
    expect(withoutComments(code, 'x.js').code).toBe(
      ['const a = 1;', 'const b = /* @__PURE__ */ make(); /*! licence */', '//# sourceMappingURL=x.js.map', ''].join('\n'),
    );
  });

  it('maps each kept token back to where it was', () => {
    const code = '// one\n// two\nconst answer = 42; // three\nexport { answer };\n';
    const { code: out, map } = withoutComments(code, 'x.js');
    const lines = out.split('\n');
    const entry = new SourceMap(JSON.parse(map.toString())).findEntry(1, lines[1].indexOf('answer')) as {
      originalLine: number;
      originalColumn: number;
    };
    expect({ line: entry.originalLine, column: entry.originalColumn }).toEqual({ line: 3, column: 9 });
  });
});
