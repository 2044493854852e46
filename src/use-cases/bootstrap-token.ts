import { hashToken } from '../domain/token.js';
import type { Store } from '../store/store.js';
import { createToken } from './create-token.js';

export type BootstrapResult = { kind: 'generated'; token: string } | { kind: 'registered' } | { kind: 'none' };

/**
 * A newcomer gets a working token on first start; an automated deployment brings its own in
 * PLANT_STORE_TOKEN. An operator's token that is already known (even revoked) is left as it is,
 * so a restart never brings a revoked token back.
 */
export async function bootstrapToken(
  store: Pick<Store, 'tokens'>,
  configured: string | undefined,
): Promise<BootstrapResult> {
  const { tokens } = store;
  if (configured !== undefined) {
    const hash = hashToken(configured);
    if (await tokens.findByHash(hash)) return { kind: 'none' };
    try {
      await createToken(store, { name: 'bootstrap (PLANT_STORE_TOKEN)', value: configured });
    } catch (err) {
      // Instances starting together on one database race here; the hash is unique, so one wins.
      if (await tokens.findByHash(hash)) return { kind: 'none' };
      throw err;
    }
    return { kind: 'registered' };
  }
  if ((await tokens.count()) > 0) return { kind: 'none' };
  const { token } = await createToken(store, { name: 'bootstrap' });
  return { kind: 'generated', token };
}
