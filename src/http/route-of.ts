import type { FastifyRequest } from 'fastify';

type RouteFacts = FastifyRequest['routeOptions'];
const FACTS = Symbol('routeFacts');

/**
 * A request's route options, read once: Fastify builds `request.routeOptions` anew at every read
 * (an object of fifteen fields), and a request's hooks read it five times or more, which was a
 * share of every request's garbage.
 */
export function routeOf(request: FastifyRequest): RouteFacts {
  const held = request as FastifyRequest & { [FACTS]?: RouteFacts };
  return (held[FACTS] ??= request.routeOptions);
}
