#!/usr/bin/env node
// The `kindly` command. The CLI itself lives in src/cli/ and is built to dist/ by `npm run build`.
import { runAsProgram } from '../dist/cli.js';

runAsProgram(process.argv.slice(2));
