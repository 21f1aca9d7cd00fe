// Adapters for host libraries. They translate between the host's conventions and
// kindly's pipeline; they do not re-implement what the host already does.
export {
  type AxiosAdapterLike,
  type AxiosConfigLike,
  type AxiosInstanceLike,
  type AxiosInterceptorsOptions,
  axiosInterceptors,
} from './axios.js';
export {
  attemptFromFailureCount,
  type MutationRetryOptions,
  mutationRetry,
  type QueryRetryOptions,
  queryRetry,
  type TanStackRetry,
} from './tanstack-query.js';
