import { NotFoundError } from '../domain/errors.js';
import type { Store } from '../store/store.js';

/** Revokes a token; running servers refuse it within a second. Revoking twice keeps the first time. */
export async function revokeToken({ tokens }: Pick<Store, 'tokens'>, id: string, now = new Date()): Promise<void> {
  if (!(await tokens.revoke(id, now))) throw new NotFoundError(`no token with id "${id}"`);
}
