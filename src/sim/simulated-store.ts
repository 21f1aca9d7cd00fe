import type { Simulation } from './engine.js';

/**
 * What the simulated fleet stores share: the simulation they run on, the round trip to the
 * store, and background syncs that go on until the run is over.
 */
export abstract class SimulatedStore {
  private syncing = true;

  constructor(
    protected readonly sim: Simulation,
    protected readonly storeRttMs: number,
  ) {}

  /** Ends the background syncs (the run is over). */
  stop(): void {
    this.syncing = false;
  }

  /** Whether background syncs go on. */
  get active(): boolean {
    return this.syncing;
  }
}
