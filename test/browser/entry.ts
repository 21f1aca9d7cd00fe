// What the test page imports: kindly's browser ESM bundle is built from this file with esbuild
// (format esm, platform browser), from the same sources as the package.

export { createFetch, fetchThrough } from '../../src/http/index.js';
export { downstream } from '../../src/index.js';
export { downstream as liteDownstream } from '../../src/lite.js';
