/**
 * Fault injection for your own tests and staging: watch kindly's protections react to
 * failures you choose. Here half the attempts to "inventory" get a 503 with
 * `Retry-After: 0` and a tenth of the rest are refused; the retry budget and the breaker respond, and
 * every injection shows in the events and the stats.
 *
 * Run: npx tsx examples/chaos.ts
 */

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { downstream, isGiveUpError } from 'kindly-calls';
import { enableChaos } from 'kindly-calls/chaos';
import { fetchThrough } from 'kindly-calls/http';

const inventoryServer = createServer((_req, res) => res.writeHead(200).end('7 in stock'));
await new Promise<void>((resolve) => inventoryServer.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(inventoryServer.address() as AddressInfo).port}/stock`;

const inventory = downstream('inventory', {
  retry: { maxAttempts: 3, backoff: { baseMs: 2 } },
  breaker: { mode: 'ratio', failureRatio: 0.5, minThroughput: 20 },
});
const stopChaos = enableChaos(inventory, {
  dangerouslyEnableChaos: true,
  seed: 2024,
  faults: [
    { kind: 'status', rate: 0.5, status: 503, headers: { 'retry-after': '0' } },
    { kind: 'error', rate: 0.1, outcome: 'failed' },
  ],
});
const injected = new Map<string, number>();
inventory.on('chaos', (e) => {
  const name = e.fault === 'status' ? `status ${e.status}` : `${e.fault} (${e.outcome})`;
  injected.set(name, (injected.get(name) ?? 0) + 1);
});

let ok = 0;
const gaveUp = new Map<string, number>();
for (let i = 0; i < 100; i++) {
  try {
    const response = await fetchThrough(inventory, url, { key: 'inventory' }); // a fixed lane key: the same draws every run
    if (response.ok) ok++;
    else gaveUp.set(`status ${response.status}`, (gaveUp.get(`status ${response.status}`) ?? 0) + 1);
  } catch (error) {
    const reason = isGiveUpError(error) ? error.reason : String(error);
    gaveUp.set(reason, (gaveUp.get(reason) ?? 0) + 1);
  }
}
stopChaos();

const stats = inventory.stats();
console.log(`100 calls: ${ok} answered 200 (${stats.retries} retries); the others:`, Object.fromEntries(gaveUp));
console.log('faults injected:', Object.fromEntries(injected));
console.log(
  `stats.chaosInjected=${stats.chaosInjected} budgetRejections=${stats.budgetRejections} breakerOpens=${stats.breakerOpens}`,
);
inventoryServer.close();
