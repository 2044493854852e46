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
  return `${message} (${response.status})`;
}
