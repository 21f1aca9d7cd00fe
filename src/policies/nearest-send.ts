/**
 * The index of the record whose send time is nearest `sentAtMs` (the first of equals), or -1
 * when there are none. An answer carries its request's send time as the attempt read it,
 * which may differ from the one the pacer logged by a clock read: the pool window's requests
 * in flight and a search's probes are both found this way.
 */
export function nearestSend(records: readonly { readonly sentAt: number }[], sentAtMs: number): number {
  let at = -1;
  let distance = Number.POSITIVE_INFINITY;
  for (let i = 0; i < records.length; i++) {
    const d = Math.abs((records[i] as { sentAt: number }).sentAt - sentAtMs);
    if (d < distance) {
      at = i;
      distance = d;
    }
  }
  return at;
}

/** Drops the record whose send time is nearest `sentAtMs` (`nearestSend`), if there is one. */
export function forgetSend(records: { readonly sentAt: number }[], sentAtMs: number): void {
  const at = nearestSend(records, sentAtMs);
  if (at >= 0) records.splice(at, 1);
}
