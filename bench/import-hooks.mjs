// Loaded with `--import` by import-cost.ts: appends every module URL loaded to the file named
// by KINDLY_IMPORT_LOG (written synchronously from the loader thread, so nothing is lost).
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(process.env.KINDLY_IMPORT_LOG, url + '\\n');
  return next(url, context);
}
`)}`,
);
