import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a build script, plain JavaScript without declarations
import { asciiComments } from '../../scripts/ascii-comments.mjs';

/**
 * The build's JavaScript is ASCII-only (scripts/ascii-comments.mjs): one non-ASCII character
 * makes Node decode a whole file on its slow path and V8 scan it as two-byte text, 8–14 % of a
 * cold import of the root. Its maps still lead to the sources.
 *
 * Needs dist/ built (`npm test` builds first).
 */
const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const built = readdirSync(dist).filter((f) => /\.c?js$/.test(f));

describe('built JavaScript', () => {
  it('is ASCII-only, every file', () => {
    expect(built.length).toBeGreaterThan(20);
    const withOther = built.filter((f) => /[\u0080-\u{10ffff}]/u.test(readFileSync(join(dist, f), 'utf8')));
    expect(withOther).toEqual([]);
  });

  it("has maps whose sources are the repository's files", () => {
    for (const f of built) {
      const map = JSON.parse(readFileSync(join(dist, `${f}.map`), 'utf8')) as { sources: string[] };
      const missing = map.sources.filter((s) => !existsSync(resolve(dirname(join(dist, f)), s)));
      expect({ file: f, missing }).toEqual({ file: f, missing: [] });
    }
  });
});

describe('asciiComments', () => {
  it('spells comments in ASCII, one character for one, and leaves code alone', () => {
    const code = "// t ≥ 2 × floor → done\nconst s = '\\u2265'; /* ₀ — 😀 */ const n = 1;\n";
    const out = asciiComments(code, 'x.js');
    expect(out).toBe("// t > 2 x floor > done\nconst s = '\\u2265'; /* 0 - ?? */ const n = 1;\n");
    expect(out.length).toBe(code.length);
  });

  it('refuses a non-ASCII character outside a comment rather than change what the code does', () => {
    expect(() => asciiComments("const s = '≥'; // ≥\n", 'x.js')).toThrow(/x\.js has "≥" outside a comment/);
    expect(() => asciiComments('const s = `a × b`;\n', 'x.cjs')).toThrow(/outside a comment/);
  });

  it('reads CommonJS as a script', () => {
    expect(asciiComments('return; // ≤\n', 'x.cjs')).toBe('return; // <\n');
  });
});
