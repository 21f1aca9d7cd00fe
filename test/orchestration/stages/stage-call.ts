import type { Classification } from '../../../src/classify/outcome.js';
import type { GiveUpReason } from '../../../src/errors/errors.js';
import { type Admission, type Queue, REFUSE, type StageCall } from '../../../src/orchestration/stage.js';

/** A call as a stage sees it, with every field settable, recording refusals. */
export function stageCall(fields: Partial<StageCall> & { pendingReleases?: (() => void)[] } = {}): StageCall & {
  refused: { reason: GiveUpReason; cause: unknown; retryAfterMs: number | undefined } | undefined;
  classification: Classification | undefined;
  pendingReleases: (() => void)[] | undefined;
} {
  const call = {
    attempt: 1,
    attemptsMade: 0,
    startedAt: 0,
    attemptStart: 0,
    deadline: Number.POSITIVE_INFINITY,
    minAttemptTimeMs: 1,
    budgetKey: 'api',
    idempotent: true,
    partition: undefined as string | undefined,
    timeoutMs: 1_000,
    cutByOwnDeadline: false,
    answerUnused: false,
    inAttempt: false,
    name: 'api',
    classification: undefined as Classification | undefined,
    token: undefined as unknown,
    waitMs: 0,
    waitAgain: false,
    queue: undefined as Queue | undefined,
    queueWaitMs: 0,
    retryAfterMs: undefined as number | undefined,
    retryPaced: false,
    refused: undefined as { reason: GiveUpReason; cause: unknown; retryAfterMs: number | undefined } | undefined,
    refuse(reason: GiveUpReason, cause: (() => unknown) | undefined, retryAfterMs: number | undefined): Admission {
      call.refused = { reason, cause: cause?.(), retryAfterMs };
      return REFUSE;
    },
    /** Releases at once unless a test parks them here (an operation still running). */
    pendingReleases: undefined as (() => void)[] | undefined,
    whenSettled(release: () => void) {
      if (call.pendingReleases === undefined) release();
      else call.pendingReleases.push(release);
    },
    ...fields,
  };
  return call;
}
