import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BudgetLease } from '../../src/policies/fleet-budget.js';
import { type BudgetLedger, syncBudget } from '../../src/store/fleet-ledger.js';

const BORROW = 1;
const MAX_LEASE = 5;

type Op = { p: number; kind: 'request' | 'take' | 'sync' | 'fail-sync' | 'late-sync' | 'wait' };

/**
 * P processes lease from one ledger in any interleaving (syncs answered, lost before the
 * store, or run by the store and answered too late; time passing). The fleet's documented
 * bound must hold whatever the order.
 */
describe('BudgetLease against the fleet ledger (property)', () => {
  it('fleet retries (tokens, credit and granted claims) ≤ ratio × first attempts + reserve + P × borrow, and 0 ≤ tokens ≤ maxLease', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom(0, 0.1, 0.2, 0.5),
        fc.integer({ min: 0, max: 20 }),
        fc.array(
          fc.record({
            p: fc.integer({ min: 0, max: 5 }),
            kind: fc.constantFrom('request', 'request', 'take', 'take', 'sync', 'fail-sync', 'late-sync', 'wait'),
          }),
          { maxLength: 400 },
        ),
        (processes, ratio, reserve, ops: Op[]) => {
          // One window that never rolls over: the bound is then exact, not per window.
          const ledger: BudgetLedger = { buckets: new Map() };
          const shape = { owner: 'x', bucketMs: 1e12, windowBuckets: 1, ratio, reserve };
          const leases = Array.from(
            { length: processes },
            () => new BudgetLease({ leaseMs: 50, maxLease: MAX_LEASE, borrow: BORROW }),
          );
          let now = 0;
          let requests = 0;
          let retries = 0;
          for (const op of ops) {
            const lease = leases[op.p % processes]!;
            if (op.kind === 'request') {
              lease.recordRequest();
              requests++;
            } else if (op.kind === 'take') {
              // No token and no credit: the retry is claimed, decided by the next sync — unless
              // the fleet refused the last claims and has shown no room since.
              if (lease.take(now)) retries++;
              else if (!lease.exhausted) lease.claim();
            } else if (op.kind === 'sync') {
              const reply = syncBudget(ledger, now, lease.syncRequest(now, { ...shape, owner: String(op.p % processes) }));
              const answered = lease.applyReply(now, reply);
              retries += answered.granted;
              expect(answered.granted + answered.refused).toBeLessThanOrEqual(reply.granted + answered.refused);
            } else if (op.kind === 'fail-sync') {
              lease.syncRequest(now, { ...shape, owner: String(op.p % processes) });
              // Claims the store did not answer are decided by the local budget, outside the fleet's.
              lease.syncFailed();
              expect(lease.claims).toBe(0);
            } else if (op.kind === 'late-sync') {
              // The store ran it (deposits, credit, returns, grants), but the answer came too
              // late: as `FleetBudgets` does, the claims are asked again after a first such sync.
              const claims = lease.claims;
              const keep = lease.failedSyncs < 1;
              syncBudget(ledger, now, lease.syncRequest(now, { ...shape, owner: String(op.p % processes) }));
              lease.syncFailed(keep);
              expect(lease.claims).toBe(keep ? claims : 0);
            } else now += 20;
            const held = lease.tokens(now);
            expect(held).toBeGreaterThanOrEqual(0);
            expect(held).toBeLessThanOrEqual(MAX_LEASE);
            expect(retries).toBeLessThanOrEqual(Math.floor(ratio * requests + reserve + 1e-9) + processes * BORROW);
          }
        },
      ),
      { numRuns: 300, seed: 0x9e17 },
    );
  });

  it('a lease given back returns its tokens to the fleet (seed-free example)', () => {
    const ledger: BudgetLedger = { buckets: new Map() };
    const shape = { owner: 'a', bucketMs: 1_000, windowBuckets: 10, ratio: 0, reserve: 10 };
    const a = new BudgetLease({ leaseMs: 100, maxLease: 5, borrow: 0 });
    a.take(0);
    expect(a.take(0)).toBe(false);
    a.applyReply(0, syncBudget(ledger, 0, a.syncRequest(0, shape)));
    expect(a.tokens(0)).toBe(1);
    // The lease expires unused; the next sync gives the token back.
    const request = a.syncRequest(200, shape);
    expect(request.returned).toBe(1);
    const reply = syncBudget(ledger, 200, request);
    expect(reply.retries).toBe(reply.granted);
    expect(reply.available + reply.granted).toBe(10);
  });

  it('a sync answered too late is not deposited twice, and its claims are asked again', () => {
    // The store ran the late sync: its 10 first attempts are counted once, so a ratio of 0.5
    // allows 5 retries, not 10.
    const ledger: BudgetLedger = { buckets: new Map() };
    const shape = { owner: 'a', bucketMs: 1_000, windowBuckets: 10, ratio: 0.5, reserve: 0 };
    const a = new BudgetLease({ leaseMs: 100, maxLease: 50, borrow: 0 });
    for (let i = 0; i < 10; i++) a.recordRequest();
    expect(a.take(0)).toBe(false);
    a.claim();
    syncBudget(ledger, 0, a.syncRequest(0, shape));
    expect(a.syncFailed(true)).toBe(0);
    expect(a.claims).toBe(1);
    expect(a.failedSyncs).toBe(1);
    let retries = 0;
    for (let i = 0; i < 20; i++) a.claim();
    const answer = a.applyReply(0, syncBudget(ledger, 0, a.syncRequest(0, shape)));
    retries += answer.granted;
    expect(a.failedSyncs).toBe(0);
    // The late sync granted the first claim in the store as well: withdrawn twice, never spent twice.
    expect(retries).toBeLessThanOrEqual(5);
    expect(answer.refused).toBe(21 - answer.granted);
    // Refused with no room left: the next retry without a token is refused here, unasked.
    expect(a.exhausted).toBe(true);
    expect(a.take(0)).toBe(false);
    // A reply with room ends that (the window has moved on: the old buckets are gone).
    for (let i = 0; i < 10; i++) a.recordRequest();
    a.applyReply(20_000, syncBudget(ledger, 20_000, a.syncRequest(20_000, shape)));
    expect(a.exhausted).toBe(false);
  });
});
