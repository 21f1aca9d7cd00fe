/**
 * gRPC: kindly's client interceptor and server interceptor for @grpc/grpc-js.
 *
 * "inventory" is overloaded and answers RESOURCE_EXHAUSTED with `grpc-retry-pushback-ms: 30`
 * twice before it answers. "orders" calls it through a kindly-protected client: the retries
 * wait the pushback, and the deadline the front client set reaches inventory as
 * `grpc-timeout`, shrunk by the time already spent.
 *
 * Run: npx tsx examples/grpc.ts
 */
import {
  credentials,
  type handleUnaryCall,
  Metadata,
  makeGenericClientConstructor,
  Server,
  ServerCredentials,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { downstream } from 'kindly-calls';
import { grpcClientInterceptor, grpcServerInterceptor } from 'kindly-calls/grpc';
import { systemClock } from 'kindly-calls/testing';

// A service definition written by hand (JSON messages): no .proto, no code generation.
const json = {
  requestSerialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  requestDeserialize: (bytes: Buffer) => JSON.parse(bytes.toString()),
  responseSerialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  responseDeserialize: (bytes: Buffer) => JSON.parse(bytes.toString()),
};
const StockService = { get: { path: '/shop.Stock/Get', requestStream: false, responseStream: false, ...json } };
const StockClient = makeGenericClientConstructor(StockService, 'Stock');
type Stock = InstanceType<typeof StockClient> & {
  get(request: unknown, options: { deadline?: number }, callback: (error: ServiceError | null, response?: unknown) => void): void;
};

async function serve(handler: (request: unknown, deadline: number | Date) => Promise<unknown>): Promise<[Server, string]> {
  const server = new Server({ interceptors: [grpcServerInterceptor()] });
  server.addService(StockService, {
    get: ((call, callback) =>
      handler(call.request, call.getDeadline()).then(
        (r) => callback(null, r),
        (e: ServiceError) => callback(e),
      )) satisfies handleUnaryCall<unknown, unknown>,
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return [server, `127.0.0.1:${port}`];
}

const ask = (client: Stock, request: unknown, deadline?: number) =>
  new Promise<unknown>((resolve, reject) =>
    client.get(request, { deadline }, (error, response) => (error ? reject(error) : resolve(response))),
  );

// inventory: overloaded for its first two calls.
let inventoryCalls = 0;
const [inventory, inventoryAddress] = await serve(async (_request, deadline) => {
  inventoryCalls++;
  const leftMs = Math.round(Number(deadline) - systemClock.now());
  if (inventoryCalls <= 2) {
    const trailers = new Metadata();
    trailers.set('grpc-retry-pushback-ms', '30');
    throw { code: status.RESOURCE_EXHAUSTED, details: 'busy', metadata: trailers };
  }
  return { sku: 'A-1', inStock: 7, deadlineLeftMs: leftMs };
});

// orders: calls inventory through kindly.
const inventoryDownstream = downstream('inventory', { retry: { maxAttempts: 4 } });
inventoryDownstream.on('retry-scheduled', (e) =>
  console.log(`orders → inventory: ${e.cause}, retry ${e.nextAttempt} in ${Math.round(e.delayMs)} ms (hint: ${e.hintSource})`),
);
const toInventory = new StockClient(inventoryAddress, credentials.createInsecure(), {
  interceptors: [grpcClientInterceptor(inventoryDownstream)],
}) as Stock;
const [orders, ordersAddress] = await serve((request) => ask(toInventory, request));

// The front client gives the whole chain 2 seconds.
const front = new StockClient(ordersAddress, credentials.createInsecure()) as Stock;
const answer = (await ask(front, { sku: 'A-1' }, systemClock.now() + 2_000)) as { deadlineLeftMs: number };
console.log(`answer after ${inventoryCalls} inventory calls:`, answer);
console.log(`inventory saw the front client's deadline: ${answer.deadlineLeftMs <= 2_000 && answer.deadlineLeftMs > 0}`);

front.close();
toInventory.close();
await Promise.all([orders, inventory].map((s) => new Promise<void>((resolve) => s.tryShutdown(() => resolve()))));
