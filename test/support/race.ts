import assert from 'node:assert/strict';
import { postPlant, send, type Target } from './http.js';

export interface RaceEntry {
  name: string;
  status: number;
}

/**
 * Sends one POST per name, all at once, for the same id, spread over the servers in turn (one
 * instance or several behind a load balancer), each on its own connection (or `inject`).
 */
export function raceCreate(urls: Target[], token: string, id: bigint, names: string[]): Promise<RaceEntry[]> {
  return Promise.all(
    names.map(async (name, i) => {
      const res = await postPlant(urls[i % urls.length]!, token, `{"id":${id},"name":${JSON.stringify(name)}}`);
      return { name, status: res.status };
    }),
  );
}

/**
 * The rule for N concurrent creations of one id: it is created once. With different names,
 * exactly one answer is 200 and the others 409, and every server reads the winner's name; with
 * identical bodies all are 200.
 */
export async function assertCreatedOnce(urls: Target[], token: string, id: bigint, race: RaceEntry[]): Promise<void> {
  const winners = race.filter((r) => r.status === 200);
  const distinct = new Set(race.map((r) => r.name)).size;
  if (distinct === 1) {
    assert.equal(winners.length, race.length, `identical bodies all succeed: ${JSON.stringify(race)}`);
  } else {
    assert.equal(winners.length, 1, `exactly one 200: ${JSON.stringify(race)}`);
    assert.equal(race.filter((r) => r.status === 409).length, race.length - 1, JSON.stringify(race));
  }
  for (const url of urls) {
    const res = await send(url, { path: `/plants/${id}`, headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    assert.equal(res.text, `{"id":${id},"name":${JSON.stringify(winners[0]!.name)}}`);
  }
}
