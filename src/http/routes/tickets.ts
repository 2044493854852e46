import type { FastifyInstance } from 'fastify';
import { tokenHashOf, type Principal } from '../../auth/verify-bearer.js';
import type { Store } from '../../store/store.js';
import { createTicket, type TicketHolder } from '../../use-cases/create-ticket.js';

/** Whom a ticket speaks for: a managed token by its hash (its limit key's), or a JWT's subject and scopes. */
function holderOf(principal: Principal): TicketHolder {
  const tokenHash = tokenHashOf(principal);
  if (tokenHash !== undefined) return { tokenHash, subject: null, scopes: [] };
  return { tokenHash: null, subject: principal.id ?? null, scopes: [...principal.scopes] as TicketHolder['scopes'] };
}

/** POST /plants/changes/tickets: a page's credential for the changes stream (its EventSource cannot send Authorization). */
export async function ticketRoutes(app: FastifyInstance, { store }: { store: Store }): Promise<void> {
  app.operation('createChangesTicket', async (request, reply) => {
    const principal = request.principal!;
    const { ticket, expiresAt } = await createTicket(store, holderOf(principal), Date.now(), principal.acceptedUntil);
    // A credential: no cache, in the browser or between, may keep it.
    return reply.code(201).header('cache-control', 'no-store').send({ ticket, expiresAt: expiresAt.toISOString() });
  });
}
