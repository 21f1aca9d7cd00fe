import { classifyError } from './classify-error.js';
import type { Classification } from './outcome.js';

/** A user's reading of an error; undefined means "ask the next classifier". */
export type Classifier = (error: unknown, nowMs: number) => Classification | undefined;

/**
 * Asks `first`, then `second`, then kindly's own classifier, and returns the first answer.
 * A classifier that throws is skipped: a bug in a user's hook must not turn a failed attempt
 * into an escaped exception (and leave a breaker permit or a bulkhead slot taken). Every
 * place that classifies — the runtime's calls and the TanStack Query adapter — goes through
 * here, so the order and the skipping are the same everywhere.
 */
export function classifyThrough(
  error: unknown,
  nowMs: number,
  first: Classifier | undefined,
  second?: Classifier,
): Classification {
  return ask(first, error, nowMs) ?? ask(second, error, nowMs) ?? classifyError(error, nowMs);
}

function ask(classifier: Classifier | undefined, error: unknown, nowMs: number): Classification | undefined {
  if (classifier === undefined) return undefined;
  try {
    return classifier(error, nowMs) ?? undefined;
  } catch {
    return undefined;
  }
}
