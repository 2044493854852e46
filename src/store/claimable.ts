/**
 * The condition, in SQL both stores run, on a delivery `d` the dispatcher may claim at `now` (a
 * placeholder): pending, due, not leased, and the oldest pending one of its plant for its
 * endpoint (order per plant).
 */
export const claimable = (now: string) => `d.state = 'pending' AND d.next_attempt_at <= ${now}
  AND (d.locked_until IS NULL OR d.locked_until <= ${now})
  AND NOT EXISTS (SELECT 1 FROM deliveries p WHERE p.endpoint_id = d.endpoint_id AND p.plant_id = d.plant_id
                  AND p.state = 'pending' AND p.event_seq < d.event_seq)`;
