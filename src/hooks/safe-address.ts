import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses a hook may never reach (unless private addresses are allowed): loopback,
 * private, shared, link-local (the cloud metadata service at 169.254.169.254 among them),
 * multicast, reserved and unspecified ranges, in IPv4 and IPv6. An IPv4 address written
 * inside IPv6 (mapped, NAT64) is judged as the IPv4 address it carries.
 */
export function isPublicAddress(address: string): boolean {
  const embedded = embeddedIpv4(address);
  if (embedded !== undefined) return !BLOCKED.check(embedded, 'ipv4');
  const family = isIP(address);
  if (family === 0) return false;
  return !BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** One address a host name resolved to, checked. */
export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves `hostname` (now: names are resolved at every delivery, so a name that later
 * points elsewhere is caught) and returns the address to connect to, or a reason to refuse:
 * every address the name has must be public, unless `allowPrivate`.
 */
export async function resolveSafely(
  hostname: string,
  allowPrivate: boolean,
): Promise<CheckedAddress | { refused: string }> {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  let addresses: { address: string; family: number }[];
  if (isIP(bare) !== 0) addresses = [{ address: bare, family: isIP(bare) }];
  else {
    try {
      addresses = await lookup(bare, { all: true, verbatim: true });
    } catch {
      return { refused: `the host ${bare} does not resolve` };
    }
  }
  if (addresses.length === 0) return { refused: `the host ${bare} does not resolve` };
  if (!allowPrivate) {
    const blocked = addresses.find((a) => !isPublicAddress(a.address));
    if (blocked !== undefined)
      return {
        refused:
          `${bare} resolves to ${blocked.address}, a loopback, private, link-local or reserved address; ` +
          'hooks deliver to public addresses only',
      };
  }
  const first = addresses[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

// Private

const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv6');

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible or NAT64 (64:ff9b::/96) one. */
function embeddedIpv4(address: string): string | undefined {
  if (isIP(address) !== 6) return undefined;
  const lower = address.toLowerCase();
  const match = /^(?:::ffff:|::|64:ff9b::)(?:0:)?([0-9a-f.:]+)$/.exec(lower);
  if (match === null) return undefined;
  const tail = match[1]!;
  if (isIP(tail) === 4) return tail;
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(tail);
  if (hex === null) return undefined;
  const high = Number.parseInt(hex[1]!, 16);
  const low = Number.parseInt(hex[2]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}
