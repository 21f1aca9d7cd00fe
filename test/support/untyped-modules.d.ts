// Types for the two test-only limiters that ship none (only what the tests use).

declare module 'redis-gcra' {
  import type { Redis } from 'ioredis';

  interface Limiter {
    limit(args: {
      key: string;
      cost?: number;
    }): Promise<{ limited: boolean; remaining: number; retryIn: number; resetIn: number }>;
  }
  export default function redisGcra(options: {
    redis: Redis;
    keyPrefix?: string;
    burst: number;
    rate: number;
    period: number;
  }): Limiter;
}

declare module 'express-queue' {
  import type { Request, RequestHandler, Response } from 'express';
  export default function expressQueue(options: {
    activeLimit: number;
    queuedLimit: number;
    rejectHandler?: (req: Request, res: Response) => void;
  }): RequestHandler;
}
