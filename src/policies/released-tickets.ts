/**
 * Tickets handed back to a pacer while still ahead (`Pacer.release`), taken again smallest
 * first by the next bookings. A binary min-heap with a set beside it: release, membership and
 * taking the smallest cost O(log n) or less. (A sorted array cost O(n) per release and per
 * booking: 80,000 callers giving up in the order they booked — equal deadlines behind one
 * `Retry-After` — blocked the event loop for 4.2 s.)
 */
export class ReleasedTickets {
  private readonly heap: number[] = [];
  private readonly members = new Set<number>();

  get size(): number {
    return this.heap.length;
  }

  has(ticket: number): boolean {
    return this.members.has(ticket);
  }

  add(ticket: number): void {
    if (this.members.has(ticket)) return;
    this.members.add(ticket);
    const heap = this.heap;
    let i = heap.push(ticket) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]! <= ticket) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = ticket;
  }

  /** Removes and returns the smallest ticket (`undefined` when empty). */
  takeSmallest(): number | undefined {
    const heap = this.heap;
    if (heap.length === 0) return undefined;
    const smallest = heap[0]!;
    this.members.delete(smallest);
    const last = heap.pop()!;
    const n = heap.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= n) break;
        const right = left + 1;
        const child = right < n && heap[right]! < heap[left]! ? right : left;
        if (heap[child]! >= last) break;
        heap[i] = heap[child]!;
        i = child;
      }
      heap[i] = last;
    }
    return smallest;
  }

  clear(): void {
    this.heap.length = 0;
    this.members.clear();
  }
}
