/**
 * A mistake on the command line (unknown option, bad value, invalid config file). The CLI
 * prints its message as one line on stderr and exits with code 2; it never leaves `run()`.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'ERR_KINDLY_USAGE';
}
