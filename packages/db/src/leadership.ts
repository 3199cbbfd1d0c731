// Leadership for the background loops across web instances: a session-level advisory
// lock held on one dedicated connection. Postgres releases it when that session ends, so a leader
// that dies (process killed, connection cut) frees it without any timeout of ours; the holder
// checks every `checkMs` that its session still holds the lock and steps down when not, since by then another
// instance may already hold the lock.

export type Lead = {
  /** Resolves when leadership is lost (the lock's connection failed). */
  lost: Promise<void>;
  release(): Promise<void>;
};

/** One attempt; null when another session holds the lock. */
export type TryLead = (key: number, checkMs: number) => Promise<Lead | null>;

export async function tryPostgresLead(url: string, key: number, checkMs: number): Promise<Lead | null> {
  // Its own one-connection client, not a connection reserved from the pool: a cut session then
  // shows as a failed or lock-less check on a fresh connection instead of a query that never ends.
  const { default: postgres } = await import("postgres");
  const sql = postgres(url, { max: 1, onnotice: () => {}, idle_timeout: 0, connect_timeout: 10 });
  const close = () => sql.end({ timeout: 1 }).catch(() => {});
  const [row] = await sql<{ ok: boolean }[]>`select pg_try_advisory_lock(${key}) as ok`.catch(async (err: unknown) => {
    await close();
    throw err;
  });
  if (!row?.ok) {
    await close();
    return null;
  }
  let done = false;
  let resolveLost = () => {};
  const lost = new Promise<void>((resolve) => (resolveLost = resolve));
  // The check asks whether this session still holds the lock (a cut connection comes back as a new
  // session without it); no answer within checkMs counts as lost too.
  const check = () =>
    Promise.race([
      sql<{ n: number }[]>`
        select count(*)::int as n from pg_locks
        where locktype = 'advisory' and objid = ${key} and pid = pg_backend_pid() and granted`.then(
        ([r]) => (r?.n ?? 0) > 0,
      ),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), checkMs).unref()),
    ]).catch(() => false);
  const end = async () => {
    if (done) return;
    done = true;
    clearInterval(timer);
    resolveLost();
    await close();
  };
  const timer = setInterval(() => {
    void check().then((held) => (held ? undefined : end()));
  }, checkMs);
  timer.unref();
  return {
    lost,
    // Ending the session releases the lock.
    release: end,
  };
}

/** The embedded database serves one process: that process always leads. */
export async function tryEmbeddedLead(): Promise<Lead> {
  return { lost: new Promise<void>(() => {}), release: async () => {} };
}

/** The key under which web instances take turns at start-up (migrations, built-in pools). */
export const STARTUP_LOCK_KEY = 0x61676c73;

/**
 * Runs `fn` while holding a session-level advisory lock, waiting for it as long as another session
 * holds it. Instances started together (a compose file, a rolling deploy) would otherwise migrate
 * the same schema and load the same built-in pool at once, and all but one would fail.
 */
export async function withPostgresLock<T>(url: string, key: number, fn: () => Promise<T>): Promise<T> {
  const { default: postgres } = await import("postgres");
  const sql = postgres(url, { max: 1, onnotice: () => {}, idle_timeout: 0, connect_timeout: 10 });
  try {
    await sql`select pg_advisory_lock(${key})`;
    return await fn();
  } finally {
    // Ending the session releases the lock (also when fn threw).
    await sql.end({ timeout: 5 }).catch(() => {});
  }
}
