// The failures a use-case can report. Each names what went wrong in words meant for the caller;
// the HTTP edge alone decides which status and headers each one gets.
import type { FailedPrecondition } from './preconditions.js';

/** Input that breaks a rule of the contract (a field out of range, ids that disagree). */
export class InvalidInputError extends Error {
  override name = 'InvalidInputError';
}

/** The thing asked for does not exist. */
export class NotFoundError extends Error {
  override name = 'NotFoundError';
}

/** The request contradicts what is stored (an id taken by a different plant). */
export class ConflictError extends Error {
  override name = 'ConflictError';
}

/** A conditional request whose condition does not hold: typically, the plant changed since the caller read it. */
export class PreconditionFailedError extends Error {
  override name = 'PreconditionFailedError';
}

/**
 * No credential, or one that is not (or no longer) valid. `presented`: a bearer token was given
 * and refused, as opposed to none given at all.
 */
export class UnauthenticatedError extends Error {
  override name = 'UnauthenticatedError';
  constructor(
    message: string,
    readonly presented: boolean,
  ) {
    super(message);
  }
}

/** A valid credential without the scope the operation needs. */
export class ForbiddenError extends Error {
  override name = 'ForbiddenError';
  constructor(readonly scope: string) {
    super(`this operation needs the scope ${scope}`);
  }
}

/** Something the service depends on cannot serve now; a retry after `retryAfterSeconds` may succeed. */
export class UnavailableError extends Error {
  override name = 'UnavailableError';
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The storage cannot be reached or cannot take the change now. */
export class StoreUnavailableError extends UnavailableError {
  override name = 'StoreUnavailableError';
  constructor(cause: unknown, message = 'the store is unavailable; retry later') {
    super(message, 1, { cause });
  }
}

/**
 * Where DATABASE_URL points there is no store, and the caller may not make one: only starting the
 * server, `migrate` and `restore` create a store; every other command works on one that exists.
 * The message says what is missing (a file, a schema, the store's tables in it).
 */
export class StoreMissingError extends Error {
  override name = 'StoreMissingError';
}

export function plantNotFound(id: bigint): NotFoundError {
  return new NotFoundError(`plant ${id} does not exist`);
}

export function plantConflict(id: bigint): ConflictError {
  return new ConflictError(`plant ${id} already exists with a different name or tag`);
}

/** A request on plant `id` refused by its `failed` condition. */
export function plantPreconditionFailed(id: bigint, failed: FailedPrecondition): PreconditionFailedError {
  return new PreconditionFailedError(
    failed === 'If-Match'
      ? `plant ${id} has changed (its ETag is no longer the one in If-Match)`
      : `plant ${id} matches If-None-Match (its ETag is one of those given, or * was given); nothing changed`,
  );
}

/**
 * A position of the change log that the store can no longer follow from: older than the oldest
 * change it keeps, above its current position, or from a log before a restore. The caller lists
 * again and follows from the position the list gives.
 */
export class GoneError extends Error {
  override name = 'GoneError';
}
