/**
 * Keeps a pacer's sends spaced when its callers wake late together. A slot schedule says when
 * each ticket may go; a caller whose timer fires late (the process was busy: a long task, a GC
 * pause, a loaded machine) finds its slot passed and sends at once — and so does every caller
 * whose slot passed meanwhile. After a 150 ms stall, 15 requests left within 1 ms into a
 * fixed window of 10 (real express-rate-limit, lognormal path latencies): six rejected, and
 * the herd sent 1.2× the bound's requests instead of 1.1×.
 *
 * The schedule's rate holds as a generic cell rate: each send moves a theoretical next-send
 * time one gap on from the later of itself and now. A caller that wakes more than a tolerance
 * after the time it was told may go only while that next-send time is at most the tolerance
 * ahead of now (`tolerance / gap + 1` at once); else it is queued behind the others that could
 * not, one gap apart, and told when. Tickets that come due while the queue is not empty join
 * its end — fresh bookings too — so the order of waking is kept and the rate holds while the
 * queue drains.
 * A caller that woke when told goes on its slot, as before: bunched slots that the schedule
 * itself made (tickets already due when it was re-spaced) are its business, not a stall's —
 * spaced out here too, a simulated sweep sent more requests, not fewer (token buckets, normal
 * 40 ms latencies: 1.094 → 1.108× the bound's).
 */
export class LateWakeQueue {
  /** When the next send conforms to the rate (−∞: nothing sent yet). */
  private nextSendAt = Number.NEGATIVE_INFINITY;
  /** The place after the last one queued (−∞: queue empty). */
  private queueEnd = Number.NEGATIVE_INFINITY;
  /** Queued tickets and their places. */
  private readonly places = new Map<number, number>();
  /** Waiting tickets and when their callers were told to ask again. */
  private readonly told = new Map<number, number>();

  /** The caller of `ticket` will ask again at `atMs`. */
  tell(ticket: number, atMs: number): void {
    this.told.set(ticket, atMs);
  }

  /** A paced send left at `nowMs` with the schedule `gap` apart. */
  sent(nowMs: number, gap: number): void {
    this.nextSendAt = Math.max(this.nextSendAt, nowMs) + gap;
  }

  /**
   * For a due `ticket`: 0 if it may go now, else the ms to wait for its place (it is queued,
   * or already was). `gap`: the schedule's spacing now; `tolerance`: how late a caller may wake
   * and still go on its slot, and how far ahead of now the next conforming send may be.
   */
  holdDue(ticket: number, nowMs: number, gap: number, tolerance: number): number {
    const place = this.places.get(ticket);
    if (place !== undefined) {
      if (place > nowMs) return place - nowMs;
      this.places.delete(ticket);
      return 0;
    }
    if (this.queueEnd <= nowMs) {
      const toldAt = this.told.get(ticket);
      const wokeLate = toldAt !== undefined && nowMs - toldAt > tolerance;
      if (!wokeLate || this.nextSendAt - tolerance <= nowMs) return 0;
    }
    const at = Math.max(this.queueEnd, this.nextSendAt - tolerance, nowMs);
    this.places.set(ticket, at);
    this.queueEnd = at + gap;
    return at - nowMs;
  }

  /** Tickets queued. */
  get size(): number {
    return this.places.size;
  }

  /** Where the next ticket would queue (−∞: queue empty): the schedule's waiting slots come after it. */
  get end(): number {
    return this.places.size === 0 ? Number.NEGATIVE_INFINITY : this.queueEnd;
  }

  /** The place `ticket` is queued for, if it is. */
  placeOf(ticket: number): number | undefined {
    return this.places.get(ticket);
  }

  /** `ticket` left (by whatever schedule), or will not be sent (its caller gave up). */
  forget(ticket: number): void {
    this.places.delete(ticket);
    this.told.delete(ticket);
  }

  /**
   * The schedule was re-spaced `gap` apart (a cut, a new rate): the queued keep their order,
   * and their places move to that spacing from the first one (or now, if later). Callers told
   * an earlier place find theirs later when they ask; those told a later one go when they ask.
   */
  respace(nowMs: number, gap: number): void {
    if (this.places.size === 0) return;
    let at = Number.NaN;
    for (const [ticket, place] of this.places) {
      if (Number.isNaN(at)) at = Math.max(place, nowMs);
      this.places.set(ticket, at);
      at += gap;
    }
    this.queueEnd = at;
  }

  /** The schedule no longer paces by rate (a search, a count of a window, a pool): nothing is queued. */
  clear(): void {
    if (this.places.size === 0) return;
    this.places.clear();
    this.queueEnd = Number.NEGATIVE_INFINITY;
  }
}
