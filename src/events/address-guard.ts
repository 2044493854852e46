import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** Loopback, private, link-local, carrier-grade NAT, unspecified, multicast and reserved ranges (IPv4 and IPv6). */
const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv6');

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family !== 6) return true;
  // An IPv4-mapped IPv6 address is the IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1]!, 'ipv4');
  return PRIVATE.check(address, 'ipv6');
}

/** The one line that says why a subscriber URL is refused, or undefined when its form is acceptable. */
export function urlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `"${text}" is not a URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'the URL must be http:// or https://';
  if (url.username || url.password) return 'the URL must not carry a user name or password';
  return undefined;
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
            `${hostname} resolves to ${refused.address}, a private or loopback address (WEBHOOK_ALLOW_PRIVATE is off)`,
          ),
          [],
        );
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** Resolves the URL's host and refuses it when an address is private and that is not allowed (`webhook add`). */
export async function checkSubscriberUrl(text: string, allowPrivate: boolean): Promise<string | undefined> {
  const problem = urlProblem(text);
  if (problem !== undefined) return problem;
  if (allowPrivate) return undefined;
  const host = new URL(text).hostname.replace(/^\[|\]$/g, '');
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
    dnsLookup(host, { all: true }, (err, list) => (err ? reject(err) : resolve(list))),
  ).catch((err: NodeJS.ErrnoException) => err);
  if (addresses instanceof Error) return `cannot resolve ${host}: ${addresses.code ?? addresses.message}`;
  const refused = addresses.find((a) => isPrivateAddress(a.address));
  if (refused) {
    return `${host} resolves to ${refused.address}, a private or loopback address; set WEBHOOK_ALLOW_PRIVATE=true to allow it`;
  }
  return undefined;
}
