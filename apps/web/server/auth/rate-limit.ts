import { DomainError } from "@agentlab/core";
import { refundRateToken, resetRateBucket, sweepRateBuckets, takeRateToken, type Bucket, type Db } from "@agentlab/db";

// Login rate limits as token buckets stored in Postgres (db queries/rate-limits.ts): every web
// instance behind the load balancer spends from the same buckets, and a restart forgets nothing.
// Each bucket holds up to `capacity` tokens and regains `refillPerS` per second.
export type BucketConfig = Bucket;

// Per IP: a burst of 20 attempts, then one every 6 s. Per account: a burst of 5, then one a minute,
// so a distributed guesser gets ~1,440 guesses a day at one account, not millions.
export const LOGIN_PER_IP: BucketConfig = { capacity: 20, refillPerS: 1 / 6 };
export const LOGIN_PER_ACCOUNT: BucketConfig = { capacity: 5, refillPerS: 1 / 60 };

// Full buckets are dropped now and then on the write path, which keeps the table small without a
// background job (a spray of IPs leaves one row each until their buckets are full again).
const SWEEP_EVERY = 200;

export type LoginLimiter = {
  /** Spends one attempt from the IP's and the account's bucket; throws TOO_MANY_REQUESTS when either is empty. */
  check(ip: string, account: string): Promise<void>;
  /** For unauthenticated endpoints with no account (one-time links): the IP's bucket only. */
  checkIp(ip: string): Promise<void>;
  /** A correct password: clears the account's bucket and refunds the IP's attempt. */
  succeeded(account: string, ip: string): Promise<void>;
  /** A one-time link redeemed or recognised: refunds the IP's attempt. */
  redeemed(ip: string): Promise<void>;
};

const accountKey = (account: string) => `account:${account.trim().toLowerCase()}`;
const ipKey = (ip: string) => `ip:${ip}`;

export function createLoginLimiter(
  db: Db,
  perIp: BucketConfig = LOGIN_PER_IP,
  perAccount: BucketConfig = LOGIN_PER_ACCOUNT,
): LoginLimiter {
  let takes = 0;
  const take = async (key: string, b: BucketConfig) => {
    if (++takes % SWEEP_EVERY === 0) await sweepRateBuckets(db);
    return takeRateToken(db, key, b);
  };
  const refuse = (wait: number) => {
    if (wait > 0)
      throw new DomainError("TOO_MANY_REQUESTS", `too many attempts; try again in ${wait} s`, { retryAfterS: wait });
  };
  return {
    // Both buckets pay for the attempt, as before: a refused account does not spare the IP.
    check: async (ip, account) =>
      refuse(Math.max(await take(ipKey(ip), perIp), await take(accountKey(account), perAccount))),
    checkIp: async (ip) => refuse(await take(ipKey(ip), perIp)),
    // A correct password clears the account's bucket, so a user who mistyped a few times is not
    // locked out after signing in; the IP pays only for failures, so a team behind one NAT that
    // signs in successfully never exhausts it, while guessing still does.
    succeeded: async (account, ip) => {
      await resetRateBucket(db, accountKey(account));
      await refundRateToken(db, ipKey(ip), perIp);
    },
    redeemed: (ip) => refundRateToken(db, ipKey(ip), perIp),
  };
}
