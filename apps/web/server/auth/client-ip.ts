import { BlockList, isIP } from "node:net";

// Which address a request comes from, for the login rate limits. Behind a load balancer
// every request arrives from the balancer, so all users would share one IP bucket; X-Forwarded-For
// names the client, but anyone can send that header. So it is believed only when the connection
// itself comes from a proxy listed in AGENTLAB_TRUSTED_PROXIES (addresses or CIDR ranges), and then
// read from the right: the first address that is not a trusted proxy is the client (entries left of
// it were written by the client and prove nothing). Without the setting the header is ignored.

/** Parses the comma-separated list; throws naming the entry that is neither an address nor a CIDR range. */
export function parseTrustedProxies(list: string | undefined): BlockList | null {
  const entries = (list ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 0) return null;
  const blocks = new BlockList();
  for (const entry of entries) {
    const [addr = "", bits, extra] = entry.split("/");
    const family = isIP(addr);
    const prefix = bits === undefined ? null : Number(bits);
    const max = family === 6 ? 128 : 32;
    if (
      !family ||
      extra !== undefined ||
      (prefix !== null && !(Number.isInteger(prefix) && prefix >= 0 && prefix <= max))
    )
      throw new Error(`AGENTLAB_TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range`);
    const type = family === 6 ? "ipv6" : "ipv4";
    if (prefix === null) blocks.addAddress(addr, type);
    else blocks.addSubnet(addr, prefix, type);
  }
  return blocks;
}

// Node reports IPv4 clients of a dual-stack socket as ::ffff:a.b.c.d.
const normalize = (ip: string) => (ip.startsWith("::ffff:") && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip);

const isTrusted = (trusted: BlockList, ip: string) => {
  const family = isIP(ip);
  return family !== 0 && trusted.check(ip, family === 6 ? "ipv6" : "ipv4");
};

export function clientIp(
  remoteAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: BlockList | null,
): string {
  const peer = normalize(remoteAddress ?? "unknown");
  if (!trusted || !isTrusted(trusted, peer) || forwardedFor === undefined) return peer;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor)
    .split(",")
    .map((h) => normalize(h.trim()))
    .filter(Boolean);
  // Walking left from the peer: each trusted hop vouches for the address on its left.
  let nearest = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i] ?? "";
    // A malformed entry was not written by one of our proxies: the last vouched-for address stands.
    if (!isIP(hop)) return nearest;
    if (!isTrusted(trusted, hop)) return hop;
    nearest = hop;
  }
  // Every hop was a trusted proxy: the farthest of them is the nearest credible address.
  return nearest;
}

// Parsed once per environment object (the app's env is created once at start).
const cache = new WeakMap<object, BlockList | null>();
export function trustedProxiesOf(env: { AGENTLAB_TRUSTED_PROXIES?: string }): BlockList | null {
  if (!cache.has(env)) cache.set(env, parseTrustedProxies(env.AGENTLAB_TRUSTED_PROXIES));
  return cache.get(env) ?? null;
}
