import { DomainError } from "@agentlab/core";

// In-memory token buckets: each key holds up to `capacity` tokens and regains `refillPerS` per
// second. One process serves the lab, so memory is the right store; a restart forgets the counts,
// which only gives an attacker a fresh burst of `capacity` attempts.
export type BucketConfig = { capacity: number; refillPerS: number };
type Bucket = { tokens: number; at: number };

export type RateLimiter = {
  /** Takes a token for `key`; returns the seconds to wait when none is left (0 when allowed). */
  take(key: string, now?: number): number;
  /** Refunds the bucket, e.g. after a successful login. */
  reset(key: string): void;
  /** Gives one token back (up to the capacity): the attempt it paid for turned out legitimate. */
  refund(key: string): void;
  size(): number;
};

export function createRateLimiter(cfg: BucketConfig, maxKeys = 100_000): RateLimiter {
  const buckets = new Map<string, Bucket>();
  const refill = (b: Bucket, now: number) => {
    b.tokens = Math.min(cfg.capacity, b.tokens + ((now - b.at) / 1000) * cfg.refillPerS);
    b.at = now;
  };
  const sweep = (now: number) => {
    // Full buckets carry no information; dropping them bounds memory under a spray of keys.
    for (const [k, b] of buckets) {
      refill(b, now);
      if (b.tokens >= cfg.capacity) buckets.delete(k);
    }
  };
  return {
    take(key, now = Date.now()) {
      let b = buckets.get(key);
      if (!b) {
        if (buckets.size >= maxKeys) sweep(now);
        b = { tokens: cfg.capacity, at: now };
        buckets.set(key, b);
      }
      refill(b, now);
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return 0;
      }
      return Math.ceil((1 - b.tokens) / cfg.refillPerS);
    },
    reset: (key) => void buckets.delete(key),
    refund(key) {
      const b = buckets.get(key);
      if (b) b.tokens = Math.min(cfg.capacity, b.tokens + 1);
    },
    size: () => buckets.size,
  };
}

// Per IP: a burst of 20 attempts, then one every 6 s. Per account: a burst of 5, then one a minute,
// so a distributed guesser gets ~1,440 guesses a day at one account, not millions.
export const LOGIN_PER_IP: BucketConfig = { capacity: 20, refillPerS: 1 / 6 };
export const LOGIN_PER_ACCOUNT: BucketConfig = { capacity: 5, refillPerS: 1 / 60 };

export type LoginLimiter = {
  /** Spends one attempt from the IP's and the account's bucket; throws TOO_MANY_REQUESTS when either is empty. */
  check(ip: string, account: string): void;
  /** For unauthenticated endpoints with no account (one-time links): the IP's bucket only. */
  checkIp(ip: string): void;
  /** A correct password: clears the account's bucket and refunds the IP's attempt. */
  succeeded(account: string, ip: string): void;
  /** A one-time link redeemed or recognised: refunds the IP's attempt. */
  redeemed(ip: string): void;
};

export function createLoginLimiter(
  perIp: BucketConfig = LOGIN_PER_IP,
  perAccount: BucketConfig = LOGIN_PER_ACCOUNT,
): LoginLimiter {
  const ips = createRateLimiter(perIp);
  const accounts = createRateLimiter(perAccount);
  const refuse = (wait: number) => {
    if (wait > 0)
      throw new DomainError("TOO_MANY_REQUESTS", `too many attempts; try again in ${wait} s`, { retryAfterS: wait });
  };
  return {
    check: (ip, account) => refuse(Math.max(ips.take(ip), accounts.take(account.trim().toLowerCase()))),
    checkIp: (ip) => refuse(ips.take(ip)),
    // A correct password clears the account's bucket, so a user who mistyped a few times is not
    // locked out after signing in; the IP pays only for failures, so a team behind one NAT that
    // signs in successfully never exhausts it, while guessing still does.
    succeeded: (email, ip) => {
      accounts.reset(email.trim().toLowerCase());
      ips.refund(ip);
    },
    redeemed: (ip) => ips.refund(ip),
  };
}
