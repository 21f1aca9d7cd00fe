// What a real herd's downstream did, 100 ms at a time: printed with a herd that broke a
// per-herd guard, so that a run nobody can repeat still says whether the pacer sent too much,
// met rejections late, or was paced slow.
import type { Downstream } from '../../src/runtime/downstream.js';

const BUCKET_MS = 100;

interface Bucket {
  sent: number;
  served: number;
  refused: number;
  answerMs: number[];
  /** The last learned rate the pacer delayed an attempt for, requests per second. */
  rate: number | undefined;
}

export class HerdTimeline {
  private readonly buckets: Bucket[] = [];
  private startMs: number | undefined;

  /** Listens to `api` from now on; the first attempt's start is time zero. */
  constructor(api: Downstream) {
    api.on('attempt-start', (e) => {
      this.startMs ??= e.atMs;
      this.at(e.atMs).sent++;
    });
    api.on('attempt-end', (e) => {
      const bucket = this.at(e.atMs);
      if (e.outcome === 'ok') bucket.served++;
      else bucket.refused++;
      bucket.answerMs.push(e.durationMs);
    });
    api.on('pacing-delay', (e) => {
      if (e.rate !== undefined) this.at(e.atMs).rate = e.rate;
    });
  }

  private at(atMs: number): Bucket {
    const index = Math.max(0, Math.floor((atMs - (this.startMs ?? atMs)) / BUCKET_MS));
    for (let i = this.buckets.length; i <= index; i++)
      this.buckets.push({ sent: 0, served: 0, refused: 0, answerMs: [], rate: undefined });
    return this.buckets[index] as Bucket;
  }

  /** One line per 100 ms: attempts sent, answers served and refused, their median time, the rate. */
  describe(): string {
    const lines = ['ms from the first try: sent, served, refused, median answer ms, pacing rate /s'];
    this.buckets.forEach((b, i) => {
      const sorted = [...b.answerMs].sort((x, y) => x - y);
      const median = sorted.length === 0 ? '-' : (sorted[sorted.length >> 1] as number).toFixed(0);
      const rate = b.rate === undefined ? '-' : b.rate.toFixed(0);
      lines.push(`${i * BUCKET_MS}: ${b.sent}, ${b.served}, ${b.refused}, ${median}, ${rate}`);
    });
    return lines.join('\n');
  }
}
