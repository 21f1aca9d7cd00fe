#!/usr/bin/env node
// The `kindly` command. The CLI itself lives in src/cli/ and is built to dist/ by `npm run build`.
import { run } from '../dist/cli.js';

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
});
