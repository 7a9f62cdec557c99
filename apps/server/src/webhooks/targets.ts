/**
 * Where a delivery may connect (docs/webhooks.md, "Safety"): never to a private, loopback,
 * link-local, shared, multicast or cloud-metadata address unless the operator allows private
 * targets (WEBHOOKS_ALLOW_PRIVATE_TARGETS, for self-hosted networks and tests).
 *
 * The check runs on the address the socket connects to, not on a name resolved earlier: the HTTP
 * agents resolve names through `guardedLookup`, which answers only addresses that pass, so a name
 * that resolves to a public address when checked and a private one later (DNS rebinding) cannot
 * slip through. An address literal in the URL is never looked up by Node, so it is checked before
 * the request (`refusedLiteral`).
 */
import dns from 'node:dns';
import net from 'node:net';
import type { LookupFunction } from 'node:net';
import { formatMessage, WEBHOOK_ATTEMPT_ERRORS } from '@reftrack/contract';

const blocked = new net.BlockList();
for (const [address, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT (also Alibaba's metadata 100.100.100.200)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, with the metadata service 169.254.169.254
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
] as const) {
  blocked.addSubnet(address, prefix, 'ipv4');
}
for (const [address, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local (AWS's IPv6 metadata fd00:ec2::254 is here)
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['2001:db8::', 32], // documentation
] as const) {
  blocked.addSubnet(address, prefix, 'ipv6');
}

/** An IPv4 address carried inside an IPv6 one (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96), if any. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const m = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/.exec(lower);
  if (!m) return undefined;
  if (m[1]) return m[1];
  const hi = parseInt(m[2], 16);
  const lo = parseInt(m[3], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** True when a delivery must not connect to `address` (an IP address in text). */
export function isForbiddenAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const inner = embeddedIpv4(address);
    if (inner) return blocked.check(inner, 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return true;
}

/** Why a refused attempt failed: the delivery log shows it. */
export class ForbiddenTargetError extends Error {
  readonly code = 'EFORBIDDENTARGET';
  constructor(address: string) {
    super(formatMessage(WEBHOOK_ATTEMPT_ERRORS.forbiddenTarget, { address }));
  }
}

/** The URL's host when it is an address literal that must not be reached; undefined otherwise. */
export function refusedLiteral(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return net.isIP(host) && isForbiddenAddress(host) ? host : undefined;
}

/**
 * A `lookup` for http(s) agents: resolves as Node does, then answers only the addresses that pass;
 * when none does, the connection fails with ForbiddenTargetError before a socket is opened.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return (callback as (e: NodeJS.ErrnoException | null, a: string, f: number) => void)(err, '', 0);
    const list = addresses as dns.LookupAddress[];
    const allowed = list.filter((a) => !isForbiddenAddress(a.address));
    if (allowed.length === 0) {
      return (callback as (e: NodeJS.ErrnoException | null, a: string, f: number) => void)(new ForbiddenTargetError(list[0]?.address ?? hostname), '', 0);
    }
    if (options.all) return (callback as (e: null, a: dns.LookupAddress[]) => void)(null, allowed);
    (callback as (e: null, a: string, f: number) => void)(null, allowed[0].address, allowed[0].family);
  });
};
