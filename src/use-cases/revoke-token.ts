import { NotFoundError } from '../domain/errors.js';
import type { Store } from '../store/store.js';

/** Revokes a token; running servers refuse it within a second. Revoking twice keeps the first time. */
export async function revokeToken(store: Store, id: string, now = new Date()): Promise<void> {
  if (!(await store.revokeToken(id, now))) throw new NotFoundError(`no token with id "${id}"`);
}
