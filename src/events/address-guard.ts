import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { urlProblem } from '../domain/webhook-rules.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

const ipv4 = (hi: number, lo: number): IPv4 => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);

/**
 * The IPv4 addresses an IPv6 address carries, for the forms that lead to one: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), the well-known NAT64 prefix
 * (64:ff9b::a.b.c.d), 6to4 (2002:aabb:ccdd::), Teredo (server and client) and the deprecated
 * IPv4-compatible form (::a.b.c.d). Undefined for any other address.
 */
function embeddedIPv4(address: IPv6, range: string): IPv4[] | undefined {
  const p = address.parts as [number, number, number, number, number, number, number, number];
  const upperZero = p.slice(0, 6).every((x) => x === 0);
  switch (range) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [ipv4(p[6], p[7])];
    case 'rfc6052':
      // 64:ff9b::/96 carries the address in its last 32 bits; the local-use 64:ff9b:1::/48 is
      // a local network's own prefix, judged as such (not public).
      return p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0 ? [ipv4(p[6], p[7])] : undefined;
    case '6to4':
      return [ipv4(p[1], p[2])];
    case 'teredo':
      // 2001:0:<server>:<flags>:<port>:<client, bits inverted>
      return [ipv4(p[2], p[3]), ipv4(p[6] ^ 0xffff, p[7] ^ 0xffff)];
    case 'unicast':
      return upperZero ? [ipv4(p[6], p[7])] : undefined;
    default:
      return undefined;
  }
}

/**
 * Why `address` is not a public unicast address, in a few words (`loopback`, `private`,
 * `6to4 form of 127.0.0.1 (loopback)`), or undefined when it is one. Ranges are ipaddr.js's
 * (its `range()` knows the special-purpose registries of both families); an IPv6 address that
 * carries an IPv4 address is judged by that address, which must be public too. Anything that
 * does not parse as an IP address is refused.
 */
export function nonPublicReason(address: string): string | undefined {
  let parsed: IPv4 | IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return 'not an IP address';
  }
  const range = parsed.range();
  if (parsed.kind() === 'ipv4') return range === 'unicast' ? undefined : range;
  const embedded = embeddedIPv4(parsed as IPv6, range);
  if (embedded === undefined) return range === 'unicast' ? undefined : range;
  for (const inner of embedded) {
    const innerRange = inner.range();
    if (innerRange !== 'unicast') {
      const form = range === 'unicast' ? 'IPv4-compatible' : range;
      return `${form} form of ${inner.toString()} (${innerRange})`;
    }
  }
  return undefined;
}

/** Anything but a public unicast address: loopback, private, link-local, reserved, multicast and the like, in any spelling. */
export function isPrivateAddress(address: string): boolean {
  return nonPublicReason(address) !== undefined;
}

export class PrivateAddressError extends Error {
  override name = 'PrivateAddressError';
  code = 'EPRIVATEADDRESS';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that refuses private addresses at connect time, so a name that
 * resolves differently later (DNS rebinding) cannot reach the inside either.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: object, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses;
      const refused = allowPrivate ? undefined : list.find((a) => isPrivateAddress(a.address));
      if (refused) {
        return callback(
          new PrivateAddressError(
            `${hostname} resolves to ${refused.address}, which is not a public address ` +
              `(${nonPublicReason(refused.address)}; WEBHOOK_ALLOW_PRIVATE is off)`,
          ),
          [],
        );
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/**
 * The part of the address check that needs no lookup, for `webhook add` and for a restore: a URL
 * whose host is an IP address is refused when that address is not public and that is not allowed.
 * Undefined for a URL whose host is a name: only a lookup can judge it (and, at each connection,
 * guardedLookup does).
 */
export function literalAddressProblem(text: string, allowPrivate: boolean): string | undefined {
  if (allowPrivate) return undefined;
  const host = new URL(text).hostname.replace(/^\[|\]$/g, '');
  // The URL parser has already written any IPv4 spelling (127.1, 0x7f.0.0.1) as a.b.c.d.
  if (isIP(host) === 0) return undefined;
  const reason = nonPublicReason(host);
  return reason && `${host} is not a public address (${reason}); set WEBHOOK_ALLOW_PRIVATE=true to allow it`;
}

/** Resolves the URL's host and refuses it when an address is private and that is not allowed (`webhook add`). */
export async function checkSubscriberUrl(text: string, allowPrivate: boolean): Promise<string | undefined> {
  const problem = urlProblem(text);
  if (problem !== undefined) return `the URL ${problem}`;
  const literal = literalAddressProblem(text, allowPrivate);
  if (literal !== undefined || allowPrivate) return literal;
  const host = new URL(text).hostname.replace(/^\[|\]$/g, '');
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
    dnsLookup(host, { all: true }, (err, list) => (err ? reject(err) : resolve(list))),
  ).catch((err: NodeJS.ErrnoException) => err);
  if (addresses instanceof Error) return `cannot resolve ${host}: ${addresses.code ?? addresses.message}`;
  const refused = addresses.find((a) => isPrivateAddress(a.address));
  if (refused) {
    return (
      `${host} resolves to ${refused.address}, which is not a public address (${nonPublicReason(refused.address)}); ` +
      'set WEBHOOK_ALLOW_PRIVATE=true to allow it'
    );
  }
  return undefined;
}
