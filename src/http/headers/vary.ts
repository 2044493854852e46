// `Vary` is built up by more than one part of the answer (the stream or page by `Accept`, CORS by
// `Origin`): each adds its field to what is there instead of setting the header.
import type { FastifyReply } from 'fastify';

/** Adds `field` to the response's `Vary`, keeping what is there. */
export function addVary(reply: FastifyReply, field: string): void {
  const now = reply.getHeader('vary');
  const fields = typeof now === 'string' && now !== '' ? now.split(/\s*,\s*/) : [];
  if (!fields.some((f) => f.toLowerCase() === field.toLowerCase())) fields.push(field);
  reply.header('vary', fields.join(', '));
}
