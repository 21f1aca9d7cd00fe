import { describe, expect, it } from 'vitest';
import { FlightLatencies } from '../../src/policies/flight-latencies.js';

describe('FlightLatencies', () => {
  it('a pool’s flight (served in 100–140 ms, rejected in ~20) reads served slowly, though one rejection took 150 ms', () => {
    const f = new FlightLatencies();
    for (const ms of [12, 15, 18, 20, 21, 23, 26, 150]) f.record(false, ms);
    for (const ms of [100, 110, 120, 130, 140]) f.record(true, ms);
    expect(f.servedSlowly(5, 8, 2)).toBe(true);
  });

  it('answers that spread alike (a bucket’s, or a backlog read at once) do not, nor too few answers, nor unknown latencies', () => {
    const alike = new FlightLatencies();
    for (const ms of [160, 170, 175, 180, 185, 190, 195, 200]) alike.record(false, ms);
    for (const ms of [165, 180, 190, 200, 210]) alike.record(true, ms);
    expect(alike.servedSlowly(5, 8, 2)).toBe(false);
    const few = new FlightLatencies();
    for (const ms of [12, 15, 18, 20, 21, 23, 26]) few.record(false, ms);
    for (const ms of [100, 110, 120, 130, 140, Number.NaN, -1]) few.record(true, ms);
    few.record(false, Number.NaN);
    expect(few.servedSlowly(5, 8, 2)).toBe(false);
    few.record(false, 30);
    expect(few.servedSlowly(5, 8, 2)).toBe(true);
    few.clear();
    expect(few.servedSlowly(5, 8, 2)).toBe(false);
  });

  it('keeps only the most recent answers of each kind: a search that lasts minutes does not hold every rejection', () => {
    const f = new FlightLatencies();
    // A long outage's fast rejections, then the path slows to 50 ms.
    for (let i = 0; i < 100_000; i++) f.record(false, 1);
    for (let i = 0; i < 300; i++) f.record(false, 50);
    // Read against every rejection the median would still be 1 ms; against the kept ones it is 50.
    expect(f.slowerThanRejections(60, 2)).toBe(false);
    expect(f.slowerThanRejections(101, 2)).toBe(true);
    for (let i = 0; i < 300; i++) f.record(true, 90);
    expect(f.servedSlowly(5, 8, 2)).toBe(false);
    // The counts asked for are of answers ever recorded, not only of those kept.
    const few = new FlightLatencies();
    for (let i = 0; i < 1_000; i++) few.record(false, 10);
    for (let i = 0; i < 4; i++) few.record(true, 100);
    expect(few.servedSlowly(5, 1_000, 2)).toBe(false);
    few.record(true, 100);
    expect(few.servedSlowly(5, 1_000, 2)).toBe(true);
  });

  it('reads the rejections at a quantile of those kept, so that one from the far tail does not set how slow they come', () => {
    const f = new FlightLatencies();
    expect(f.rejectedQuantile(0.95)).toBeNaN();
    expect(f.rejectedCount).toBe(0);
    // 74 rejections of 10–83 ms, then one of 194 ms (lognormal 20 ms latencies' far tail).
    for (let i = 0; i < 74; i++) f.record(false, 10 + i);
    f.record(false, 194);
    f.record(true, 150);
    expect(f.rejectedCount).toBe(75);
    expect(f.rejectedQuantile(1)).toBe(194);
    expect(f.rejectedQuantile(0.95)).toBe(81);
    expect(f.rejectedQuantile(0)).toBe(10);
    expect(f.slowerThanRejections(100, 2)).toBe(true);
    // Kept in order after later answers arrive (a cache made before them is not read).
    for (let i = 0; i < 20; i++) f.record(false, 5);
    expect(f.rejectedQuantile(0)).toBe(5);
    expect(f.rejectedCount).toBe(95);
    f.clear();
    expect(f.rejectedCount).toBe(0);
    expect(f.rejectedQuantile(0.5)).toBeNaN();
  });
});
