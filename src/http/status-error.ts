import { classifyStatus } from '../classify/http-status.js';
import { HttpStatusError } from '../errors/errors.js';
import { withoutSecrets } from './response-body.js';

/**
 * The `HttpStatusError` for a failed `fetch` response, for code that calls `fetch` itself and
 * retries elsewhere (a TanStack Query `queryFn`): `if (!res.ok) throw httpStatusError(res)`.
 * kindly's classifier then reads its status, wait hints and don't-retry markers. The error's
 * `response` is the same response without its URL and without `Set-Cookie` or other secret
 * headers, body still readable (if `response`'s was not read yet).
 * A status below 400 is not a failure: `RangeError`.
 */
export function httpStatusError(response: Response, downstream?: string): HttpStatusError {
  const reading = classifyStatus(response.status);
  if (reading === undefined) throw new RangeError(`httpStatusError: status ${response.status} is not a failure`);
  const details: ConstructorParameters<typeof HttpStatusError>[1] = {
    outcome: reading.outcome,
    response: withoutSecrets(response),
  };
  if (downstream !== undefined) details.downstream = downstream;
  return new HttpStatusError(response.status, details);
}
