// What a handler receives for one operation, typed from the document: the `operations` that
// openapi-typescript generates from it (src/client/schema.ts, `npm run generate:client`), seen
// as the contract's validators leave a request rather than as a client may send it. Types only;
// the one value, QUERY_DEFAULTS, is checked against the document by
// test/openapi/operation-types.test.ts.
import type { operations, paths } from '../client/schema.js';

/**
 * The operations the service answers: those of the document's paths (its webhooks it sends).
 * Told apart by shape, as types are; the start-up check stands behind it (http/plugins/contract.ts).
 */
type Served = { [P in keyof paths]: paths[P][Exclude<keyof paths[P], 'parameters'>] }[keyof paths];
export type OperationId = {
  [Id in keyof operations]: operations[Id] extends Served ? Id : never;
}[keyof operations];

type ParametersOf<Id extends OperationId> = operations[Id]['parameters'];

/**
 * Path and query values arrive as text. The contract's `decimalInteger` keyword
 * (request-schema.ts) hands the handler an int64 as an exact bigint, whatever its size, and an
 * int32 as a number. openapi-typescript types what a client may send: the generator makes every
 * `format: int64` of the document `number | bigint` (scripts/generate-client.ts), and nothing
 * else becomes bigint, so a field that admits a bigint is exactly an int64 of the document, and
 * here it is a bigint alone. (An integer parameter is int32 or int64: the test checks it.)
 *
 * A body keeps the generated types: the exact JSON reader (json/read-json.ts) gives a whole
 * number as a number while it is a safe integer and as a bigint past 2^53, and the `int64`
 * keyword accepts both, so `number | bigint` is what an int64 of a body is.
 */
type FromText<T> = { [K in keyof T]: bigint extends T[K] ? bigint : T[K] };

/**
 * Query parameters the document gives a default: Ajv fills them in (`useDefaults`), so the
 * handler always has them. A type cannot read a default from the document, so they are named
 * here, and the test compares this list with the document's defaults.
 */
export const QUERY_DEFAULTS = { listPlants: ['limit'], listChanges: ['limit'] } as const satisfies {
  [Id in OperationId]?: readonly (keyof NonNullable<ParametersOf<Id>['query']>)[];
};
type Defaulted<Id> = Id extends keyof typeof QUERY_DEFAULTS ? (typeof QUERY_DEFAULTS)[Id][number] : never;
type WithDefaults<T, D extends PropertyKey> = {
  [K in keyof T as K extends D ? K : never]-?: Exclude<T[K], undefined>;
} & {
  [K in keyof T as K extends D ? never : K]: T[K];
};

/** A part the operation does not declare: path and query are then `{}` (the query guard refuses any). */
type Part<T, Else> = [NonNullable<T>] extends [never] ? Else : NonNullable<T>;

type Body<Op> = Op extends { requestBody: { content: infer C } } ? C[keyof C] : unknown;

/** Header names are case-insensitive; Node hands them over in lowercase. */
type Lowercased<T> = { [K in keyof T as K extends string ? Lowercase<K> : K]: T[K] };

export interface OperationInput<Id extends OperationId> {
  params: FromText<Part<ParametersOf<Id>['path'], Record<string, never>>>;
  query: WithDefaults<FromText<Part<ParametersOf<Id>['query'], Record<string, never>>>, Defaulted<Id>>;
  /** The headers the operation declares; the request's others are there too, as Node gives them. */
  headers: Lowercased<Part<ParametersOf<Id>['header'], Record<never, never>>>;
  /** The request body as its schema lets it through; unknown where the operation declares none. */
  body: Body<operations[Id]>;
}
