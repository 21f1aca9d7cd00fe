// Loaded with `--import` by import-cost.ts: appends every module URL loaded to the file named
// by KINDLY_IMPORT_LOG. In-thread synchronous hooks where Node has them (22.15+), else the
// loader-thread hooks of `module.register` (written synchronously, so nothing is lost).
import { appendFileSync } from 'node:fs';
import * as module from 'node:module';

if (typeof module.registerHooks === 'function') {
  module.registerHooks({
    load(url, context, next) {
      appendFileSync(process.env.KINDLY_IMPORT_LOG, `${url}\n`);
      return next(url, context);
    },
  });
} else {
  module.register(
    `data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(process.env.KINDLY_IMPORT_LOG, url + '\\n');
  return next(url, context);
}
`)}`,
  );
}
