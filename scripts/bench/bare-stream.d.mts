import type { ServerResponse } from 'node:http';

/** Answers `res` as an idle stream and keeps it in `held` until it closes (bare-stream.mjs). */
export function holdAsStream(res: ServerResponse, held: Set<ServerResponse>): void;
