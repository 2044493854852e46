/**
 * How many deliveries to claim now for each endpoint, so that no subscriber can hold the slots of
 * the others (a subscriber that never answers keeps each of its attempts for the whole time-out).
 *
 * An endpoint is busy when it has attempts in flight here or deliveries due. Each may hold at
 * most its share of the slots: `slots` divided among the busy endpoints plus one more while some
 * other endpoint is enabled, so an endpoint that becomes busy finds slots free at once rather than
 * after the others' time-outs. Free slots go one at a time to the endpoint with the fewest in
 * flight, as long as it has deliveries due and is under its share.
 *
 * @param inFlight attempts in flight on this instance, by endpoint
 * @param due endpoints with deliveries due that no instance holds
 * @param enabled how many endpoints are enabled
 */
export function fairShares(
  slots: number,
  inFlight: ReadonlyMap<string, number>,
  due: readonly string[],
  enabled: number,
): Map<string, number> {
  const held = (e: string) => inFlight.get(e) ?? 0;
  const busy = new Set(due);
  for (const [e, n] of inFlight) if (n > 0) busy.add(e);
  const share = Math.max(1, Math.floor(slots / Math.max(busy.size, Math.min(enabled, busy.size + 1))));
  let free = slots;
  for (const n of inFlight.values()) free -= n;
  const grants = new Map<string, number>();
  const candidates = due.filter((e) => held(e) < share);
  while (free > 0 && candidates.length > 0) {
    // The endpoint with the fewest in flight (ties: the one first in `due`).
    let best = 0;
    const load = (i: number) => held(candidates[i]!) + (grants.get(candidates[i]!) ?? 0);
    for (let i = 1; i < candidates.length; i++) if (load(i) < load(best)) best = i;
    const e = candidates[best]!;
    grants.set(e, (grants.get(e) ?? 0) + 1);
    free--;
    if (load(best) >= share) candidates.splice(best, 1);
  }
  return grants;
}
