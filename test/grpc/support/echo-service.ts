import {
  type Client,
  credentials,
  type handleUnaryCall,
  type Interceptor,
  makeGenericClientConstructor,
  Server,
  ServerCredentials,
  type ServerInterceptor,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';

/** A hand-written service definition with JSON messages: no .proto, no code generation. */
const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value ?? null)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString('utf8')) as unknown,
};
const unary = (path: string) => ({
  path,
  requestStream: false,
  responseStream: false,
  requestSerialize: json.serialize,
  requestDeserialize: json.deserialize,
  responseSerialize: json.serialize,
  responseDeserialize: json.deserialize,
});

export const ECHO_SERVICE = {
  call: unary('/kindly.test.Echo/Call'),
  other: unary('/kindly.test.Echo/Other'),
} satisfies ServiceDefinition;

export type EchoHandler = handleUnaryCall<unknown, unknown>;

export interface EchoServer {
  address: string;
  close(): Promise<void>;
}

/** A real grpc-js server on loopback, port 0. */
export async function startEchoServer(
  handlers: { call: EchoHandler; other?: EchoHandler },
  interceptors: ServerInterceptor[] = [],
): Promise<EchoServer> {
  const server = new Server({ interceptors });
  server.addService(ECHO_SERVICE, { call: handlers.call, other: handlers.other ?? handlers.call });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
      }),
  };
}

export interface EchoClient extends Client {
  call(request: unknown, callback: (error: ServiceError | null, response?: unknown) => void): unknown;
  call(
    request: unknown,
    options: { deadline?: number | Date },
    callback: (error: ServiceError | null, response?: unknown) => void,
  ): unknown;
  other(request: unknown, callback: (error: ServiceError | null, response?: unknown) => void): unknown;
}

const EchoClientConstructor = makeGenericClientConstructor(ECHO_SERVICE, 'Echo');

export function echoClient(address: string, interceptors: Interceptor[] = []): EchoClient {
  return new EchoClientConstructor(address, credentials.createInsecure(), { interceptors }) as unknown as EchoClient;
}

/** Promise form of a unary call: resolves with the response or the `ServiceError`. */
export function ask(
  client: EchoClient,
  request: unknown,
  method: 'call' | 'other' = 'call',
  options: { deadline?: number | Date } = {},
): Promise<{ response?: unknown; error?: ServiceError }> {
  return new Promise((resolve) => {
    const done = (error: ServiceError | null, response?: unknown) => resolve(error ? { error } : { response });
    if (method === 'other') client.other(request, done);
    else client.call(request, options, done);
  });
}
