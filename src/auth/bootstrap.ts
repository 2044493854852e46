import type { Store } from '../store/store.js';
import { createToken, hashToken } from './tokens.js';

export type BootstrapResult = { kind: 'generated'; token: string } | { kind: 'registered' } | { kind: 'none' };

/**
 * A newcomer gets a working token on first start; an automated deployment brings its own in
 * PLANT_STORE_TOKEN. An operator's token that is already known (even revoked) is left as it is,
 * so a restart never brings a revoked token back.
 */
export async function bootstrapToken(store: Store, configured: string | undefined): Promise<BootstrapResult> {
  if (configured !== undefined) {
    if (await store.findTokenByHash(hashToken(configured))) return { kind: 'none' };
    await createToken(store, { name: 'bootstrap (PLANT_STORE_TOKEN)', value: configured });
    return { kind: 'registered' };
  }
  if ((await store.countTokens()) > 0) return { kind: 'none' };
  const { token } = await createToken(store, { name: 'bootstrap' });
  return { kind: 'generated', token };
}
