// The signed-in session: the token, kept for this tab only (sessionStorage: never a URL, a cookie
// or localStorage), and the typed client that sends it.
import { createPlantStoreClient, type PlantStoreClient } from '../../src/client/index.js';

const KEY = 'plant-store-console-token';

export interface Session {
  /** Where the API is: the directory of the console's page, so a path prefix is kept. */
  baseUrl: string;
  token: string;
  client: PlantStoreClient;
}

export function baseUrl(): string {
  return new URL('.', location.href).href.replace(/\/$/, '');
}

export function open(token: string): Session {
  return { baseUrl: baseUrl(), token, client: createPlantStoreClient({ baseUrl: baseUrl(), token }) };
}

export const saved = (): string | null => sessionStorage.getItem(KEY);
export const save = (token: string): void => sessionStorage.setItem(KEY, token);
export const forget = (): void => sessionStorage.removeItem(KEY);

/**
 * What to tell the user of a refused request: a missing scope by its name (the 403's
 * WWW-Authenticate names it), a refused token as such, else the API's own message.
 */
export function refusal(response: Response, body: unknown): string {
  const message = (body as { message?: string } | undefined)?.message ?? response.statusText;
  if (response.status === 403) {
    const scope = /scope="([^"]+)"/.exec(response.headers.get('www-authenticate') ?? '')?.[1];
    if (scope) return `Your token may not do this: it lacks the scope ${scope}.`;
  }
  if (response.status === 401) return 'The API does not accept this token (unknown, expired or revoked).';
  // A 429 or 503 says when to come back: the user is told, rather than left to guess and click.
  const retry = response.headers.get('retry-after');
  return `${message} (${response.status})${retry && /^\d+$/.test(retry) ? `: try again in ${retry} s.` : ''}`;
}

/**
 * What to tell the user of an action (resolving to a refusal's message, or nothing): also when
 * its request got no answer at all (the network or the server is down), where fetch rejects and
 * the action would otherwise end with nothing shown.
 */
export async function told(action: () => Promise<string | undefined | void>): Promise<string | undefined> {
  try {
    return (await action()) ?? undefined;
  } catch (err) {
    return noAnswer(err);
  }
}

/** The message of a request that got no answer: fetch's rejection (Chromium's is "Failed to fetch"). */
export function noAnswer(err: unknown): string {
  const reason = err instanceof Error ? err.message : String(err);
  return `The store did not answer (${reason}): check the connection, then try again.`;
}
