// Makes built JavaScript ASCII-only by spelling the non-ASCII characters of its comments in
// ASCII ("≥" becomes ">", "×" becomes "x"), one character for one, so that every line and
// column, and so every source map, stays as it was.
//
// Why: esbuild escapes non-ASCII characters in strings and identifiers, but keeps comments as
// written, and ours use "—", "×", "≥", "→". One such character anywhere makes Node decode the
// whole file on its slow path and hand V8 a two-byte source, which it scans more slowly: the
// root entry's cold import took 27.41 / 24.26 / 22.77 ms with them and 25.20 / 21.15 / 19.65 ms
// without (Node 20 / 24 / 26; docs/benchmarks.md, "Import cost"). The readable originals stay
// in the source maps' `sourcesContent`.
//
// Only comments are touched. A non-ASCII character outside a comment (a string written by a
// build that does not escape them) is an error, never rewritten: that would change behaviour.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'acorn';

/** Readable stand-ins for the characters our comments use; anything else becomes "?". */
const SPELLING = {
  '—': '-',
  '–': '-',
  '−': '-',
  '─': '-',
  '×': 'x',
  '÷': '/',
  '·': '.',
  '…': '.',
  '→': '>',
  '⇒': '>',
  '⇔': '=',
  '≥': '>',
  '≤': '<',
  '≈': '~',
  '∞': '~',
  '±': '+',
  '√': 'v',
  '∛': 'v',
  '⌈': '[',
  '⌉': ']',
  '⌊': '[',
  '⌋': ']',
  '′': "'",
  '’': "'",
  '§': 'S',
  β: 'b',
  σ: 's',
  µ: 'u',
  μ: 'u',
  Δ: 'D',
  '⁰': '0',
  '¹': '1',
  '²': '2',
  '³': '3',
  '⁹': '9',
  ⁿ: 'n',
  '₀': '0',
  '₁': '1',
  '₂': '2',
  ₚ: 'p',
  ₛ: 's',
  ᴸ: 'L',
};

const NON_ASCII = /[\u0080-\u{10ffff}]/gu;
const HAS_NON_ASCII = /[\u0080-\u{10ffff}]/u;

/** `char` (one code point) in ASCII, as many UTF-16 units long as it is. */
function spell(char) {
  return SPELLING[char] ?? '?'.repeat(char.length);
}

/**
 * `code` (a module or script as a bundler wrote it) with its comments in ASCII. Throws when a
 * non-ASCII character is found outside a comment; `name` says which file.
 */
export function asciiComments(code, name) {
  if (!HAS_NON_ASCII.test(code)) return code;
  const comments = [];
  parse(code, {
    ecmaVersion: 'latest',
    sourceType: name.endsWith('.cjs') ? 'script' : 'module',
    allowHashBang: true,
    allowReturnOutsideFunction: true,
    onComment: (_block, _text, start, end) => comments.push([start, end]),
  });
  let out = '';
  let at = 0;
  for (const [start, end] of comments) {
    out += outsideComments(code.slice(at, start), name) + code.slice(start, end).replace(NON_ASCII, spell);
    at = end;
  }
  return out + outsideComments(code.slice(at), name);
}

function outsideComments(text, name) {
  const found = HAS_NON_ASCII.exec(text);
  if (found !== null) {
    throw new Error(
      `ascii-comments: ${name} has "${found[0]}" outside a comment (near "${text.slice(Math.max(0, found.index - 40), found.index + 10)}")`,
    );
  }
  return text;
}

/** Rewrites every `.js` and `.cjs` file of a build directory in place (their maps stay valid). */
export function asciiCommentsIn(dir) {
  for (const f of readdirSync(dir)) {
    if (!/\.c?js$/.test(f)) continue;
    const path = join(dir, f);
    const code = readFileSync(path, 'utf8');
    const ascii = asciiComments(code, f);
    if (ascii !== code) writeFileSync(path, ascii);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) asciiCommentsIn(process.argv[2] ?? 'dist');
