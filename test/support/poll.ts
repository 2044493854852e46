/**
 * Calls `check` every `intervalMs` until it resolves true or `timeoutMs` has passed; resolves
 * to whether it did. For behaviours whose contract is a time limit ("within 1 s"), and for
 * waiting on something bounded, never to paper over a race.
 */
export async function pollUntil(check: () => Promise<boolean>, timeoutMs: number, intervalMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
