// Requests a test of the change log sends: writes with a token, the Change-Position a response
// carries, and a page of changes read with the exact JSON reader (positions pass 2^53).
import { readJson } from '../../src/json/read-json.js';
import type { TestApp } from '../helper.js';
import type { RawResponse } from './http.js';

interface ChangeJson {
  position: number | bigint;
  type: string;
  id: number | bigint;
  plant?: { id: number | bigint; name: string; tag?: string };
  time: string;
}

export function requests(app: TestApp) {
  const auth = { authorization: `Bearer ${app.token}` };
  const write = (method: string, path: string, body?: unknown, type = 'application/json') =>
    app.inject({
      method,
      path,
      headers: { ...auth, ...(body !== undefined && { 'content-type': type }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  const position = (res: RawResponse) => BigInt(String(res.headers['change-position']));
  const changes = async (query: string): Promise<{ res: RawResponse; list: ChangeJson[] }> => {
    const res = await app.inject({ path: `/plants/changes${query}`, headers: auth });
    return { res, list: res.status === 200 ? (readJson(res.text) as ChangeJson[]) : [] };
  };
  return { auth, write, position, changes };
}
