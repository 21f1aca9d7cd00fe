// Removes the comments esbuild carries over into built JavaScript, with a source map of the
// removal, for the merge step (merge-root-chunks.mjs) to chain after esbuild's own map.
//
// Why: esbuild keeps statement comments when it does not minify, and ours are long (76 KB of
// the root chunk's 295 KB). Node reads, decodes and V8 scans every byte of a module before it
// runs, so they cost a cold import time without doing anything; dropping them saved ~0.2–0.8 ms
// of ~15 ms of CPU per cold import on Node 24 and 26 (docs/benchmarks.md, "Import cost"). The code
// keeps its names and layout, and the comments stay readable in the source maps'
// `sourcesContent` and in `src/`.
//
// Kept: annotations bundlers read (`/* @__PURE__ */`, `#__NO_SIDE_EFFECTS__`), licence comments
// (`/*!`), and `//#` / `//@` directives.
import { parse } from 'acorn';
import MagicString from 'magic-string';

const KEEP = /^[!#@]|__PURE__|__NO_SIDE_EFFECTS__/;

/** `code` without its comments, and the map from `code` to the result (`id` names the file). */
export function withoutComments(code, id) {
  const comments = [];
  parse(code, {
    ecmaVersion: 'latest',
    sourceType: 'module',
    onComment: (_block, text, start, end) => {
      if (!KEEP.test(text.trim())) comments.push([start, end]);
    },
  });
  const out = new MagicString(code);
  for (let [start, end] of comments) {
    // Spaces before the comment go with it; a comment alone on its line takes the line along.
    while (start > 0 && (code[start - 1] === ' ' || code[start - 1] === '\t')) start--;
    if ((start === 0 || code[start - 1] === '\n') && code[end] === '\n') end++;
    out.remove(start, end);
  }
  return { code: out.toString(), map: out.generateMap({ source: id, hires: true }) };
}
