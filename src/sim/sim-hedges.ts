import type { Classification } from '../classify/outcome.js';
import type { CallMachine } from '../orchestration/call-machine.js';
import type { HedgeAttempt } from '../orchestration/hedge-attempt.js';
import { RESULT_FAILED, RESULT_NEUTRAL, RESULT_OK } from '../orchestration/stage.js';
import { TIMED_OUT } from './dependency.js';
import type { EventKind, Simulation } from './engine.js';

/** How the runtime classifies a hedge cut by the call's deadline (`DeadlineExceededError`): no time is left. */
const CUT_BY_DEADLINE: Readonly<Classification> = Object.freeze({ outcome: 'unknown', retryable: false, timeout: true });

/** What `SimHedges` needs of its downstream (a `SimDownstream`). */
export interface HedgedDownstream {
  machineOf(call: number): CallMachine | undefined;
  send(call: number, machine: CallMachine, now: number, hedge: number, deadline: number, timeoutKind: number, arg: number): void;
  won(call: number, machine: CallMachine, now: number): void;
  lost(call: number, machine: CallMachine, now: number, classification: Classification, deadlineCut: boolean): void;
}

/** One call's hedged attempt while it runs. */
interface Group {
  /** When the next hedge is due. */
  dueAt: number;
  delayMs: number;
  primaryRunning: boolean;
  /** Hedges by number (index 0 unused), `undefined` once ended. */
  members: (HedgeAttempt | undefined)[];
  /** Members running: the attempt and its hedges. */
  running: number;
}

/**
 * The hedges of a simulated downstream's calls, as `runHedged` runs them in the runtime: a
 * hedge every `delayMs` while no answer came (at most `maxHedges`; a refusal ends hedging for
 * the attempt), each admitted by the stages (`CallMachine.startHedge`) and timed on its own.
 * The first success wins and the others end at once (their operations honour the abort); a
 * failure ends the group only when it is the last member running, and the attempt then fails
 * with it.
 */
export class SimHedges {
  /** Hedges sent. */
  sent = 0;
  /** Calls whose value was a hedge's answer. */
  wins = 0;
  private readonly groups: (Group | undefined)[] = [];
  private readonly dueKind: EventKind;
  private readonly timeoutKind: EventKind;
  /** Event arguments of hedge timers: `call × slots + hedge`. */
  private readonly slots: number;

  constructor(
    private readonly sim: Simulation,
    private readonly owner: HedgedDownstream,
    private readonly maxHedges: number,
  ) {
    this.slots = maxHedges + 1;
    this.dueKind = sim.on((call, now) => this.due(call, now));
    this.timeoutKind = sim.on((arg, now) => this.hedgeTimedOut(Math.floor(arg / this.slots), arg % this.slots, now));
  }

  /** Whether call `call`'s running attempt is hedged. */
  hedged(call: number): boolean {
    return this.groups[call] !== undefined;
  }

  /** Call `call`'s attempt left now: its first hedge is due after `delayMs`. */
  begin(call: number, _machine: CallMachine, delayMs: number): void {
    const dueAt = this.sim.now + delayMs;
    this.groups[call] = { dueAt, delayMs, primaryRunning: true, members: [undefined], running: 1 };
    this.sim.at(dueAt, this.dueKind, call);
  }

  /** The call ended. */
  forget(call: number): void {
    this.groups[call] = undefined;
  }

  /** An answer to the attempt (`hedge` 0) or one of its hedges. */
  answer(call: number, machine: CallMachine, now: number, failure: Classification | undefined, hedge: number): void {
    const group = this.groups[call] as Group;
    if (hedge === 0 ? !group.primaryRunning : group.members[hedge] === undefined) return;
    if (failure === undefined) this.won(call, machine, group, hedge, now);
    else this.memberFailed(call, machine, group, hedge, now, failure, false);
  }

  /** The attempt's own timer fired while it was hedged. */
  attemptTimedOut(call: number, machine: CallMachine, now: number): void {
    const group = this.groups[call] as Group;
    if (group.primaryRunning) this.memberFailed(call, machine, group, 0, now, TIMED_OUT, machine.deadlineBound);
  }

  private due(call: number, now: number): void {
    const machine = this.owner.machineOf(call);
    const group = this.groups[call];
    if (machine === undefined || group === undefined || group.dueAt !== now) return;
    const n = group.members.length;
    if (n > this.maxHedges) return;
    const hedge = machine.startHedge(now, n);
    if (hedge === undefined) return;
    group.members.push(hedge);
    group.running++;
    this.sent++;
    this.owner.send(call, machine, now, n, hedge.attemptDeadline, this.timeoutKind, call * this.slots + n);
    if (n < this.maxHedges) {
      group.dueAt = now + group.delayMs;
      this.sim.at(group.dueAt, this.dueKind, call);
    }
  }

  private hedgeTimedOut(call: number, n: number, now: number): void {
    const machine = this.owner.machineOf(call);
    const group = this.groups[call];
    const hedge = group?.members[n];
    if (machine === undefined || group === undefined || hedge === undefined || hedge.attemptDeadline > now) return;
    this.memberFailed(call, machine, group, n, now, hedge.deadlineBound ? CUT_BY_DEADLINE : TIMED_OUT, false);
  }

  /** A member failed: the group fails with it when it was the last one running. */
  private memberFailed(
    call: number,
    machine: CallMachine,
    group: Group,
    n: number,
    now: number,
    classification: Classification,
    deadlineCut: boolean,
  ): void {
    if (n === 0) group.primaryRunning = false;
    else {
      machine.hedgeEnded(group.members[n] as HedgeAttempt, now, RESULT_FAILED, classification);
      group.members[n] = undefined;
    }
    group.running--;
    if (group.running > 0) return;
    this.groups[call] = undefined;
    this.owner.lost(call, machine, now, classification, deadlineCut);
  }

  /** Member `winner` answered first: the others end now, and the call has its value. */
  private won(call: number, machine: CallMachine, group: Group, winner: number, now: number): void {
    this.groups[call] = undefined;
    const members = group.members;
    if (winner > 0) {
      machine.hedgeEnded(members[winner] as HedgeAttempt, now, RESULT_OK);
      members[winner] = undefined;
      this.wins++;
      machine.answerUnused = true;
    }
    for (let i = 1; i < members.length; i++) {
      const loser = members[i];
      if (loser !== undefined) machine.hedgeEnded(loser, now, RESULT_NEUTRAL);
    }
    this.owner.won(call, machine, now);
  }
}
