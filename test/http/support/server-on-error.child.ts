/**
 * Run in a process of its own by test/http/server-on-error.test.ts: a real node:http server on
 * 127.0.0.1 whose handler throws, wrapped by `nodeHttpHandler` with an `onError` reporter that
 * itself fails (the scenario says how), and a client that asks it twice. There is no
 * `unhandledRejection` handler here: a rejection nobody handles ends the process with a
 * non-zero exit code, as it would a real server's. Prints one JSON line.
 */
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nodeHttpHandler } from '../../../src/http/index.js';

const reporters: Record<string, (error: unknown) => void | Promise<void>> = {
  async rejects(error) {
    await Promise.resolve();
    throw new Error(`log shipper down while reporting: ${(error as Error).message}`);
  },
  returnsRejected: (error) => Promise.reject(new Error(`log shipper down while reporting: ${(error as Error).message}`)),
  throws(error) {
    throw new Error(`log shipper down while reporting: ${(error as Error).message}`);
  },
};

const scenario = process.argv[2] ?? '';
const reporter = reporters[scenario];
if (reporter === undefined) throw new Error(`unknown scenario ${scenario}`);

const reported: string[] = [];
const server = createServer(
  nodeHttpHandler(
    async (req) => {
      if (req.url === '/async') await Promise.resolve();
      throw new Error(`handler bug at ${req.url}`);
    },
    {
      onError: (error) => {
        reported.push((error as Error).message);
        return reporter(error);
      },
    },
  ),
);

function ask(port: number, path: string): Promise<{ status: number | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    }).on('error', reject);
  });
}

server.listen(0, '127.0.0.1', async () => {
  const { port } = server.address() as AddressInfo;
  const answers = [await ask(port, '/async'), await ask(port, '/sync')];
  // A rejection left unhandled is reported once the microtasks drain: let them.
  await new Promise((resolve) => setImmediate(resolve));
  server.close();
  console.log(JSON.stringify({ answers, reported }));
});
