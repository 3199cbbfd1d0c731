// Cost of the auth hot paths: one scrypt hash/verify (what a login or a guess costs the server),
// and resolving a session cookie and an API token per request against the real Postgres.
import postgres from "postgres";
import { randomBytes } from "node:crypto";
import {
  createApiToken,
  createSession,
  migrateDatabase,
  openDatabase,
  principalByApiToken,
  principalBySession,
  users,
} from "@agentlab/db";
import { hashPassword, verifyPassword } from "../apps/web/server/auth/password";

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? "postgres://root@127.0.0.1:5432/postgres";
const ms = (t0: number) => performance.now() - t0;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

const hashes: number[] = [];
const verifies: number[] = [];
let stored = "";
for (let i = 0; i < 5; i++) {
  let t0 = performance.now();
  stored = await hashPassword(`bench password ${i}`);
  hashes.push(ms(t0));
  t0 = performance.now();
  await verifyPassword(`bench password ${i}`, stored);
  verifies.push(ms(t0));
}

const name = `agentlab_bench_${randomBytes(4).toString("hex")}`;
const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${name}`);
const url = new URL(ADMIN_URL);
url.pathname = `/${name}`;
const database = await openDatabase({ url: url.toString(), maxConnections: 4 });
try {
  await migrateDatabase(database);
  const { db } = database;
  const [user] = await db
    .insert(users)
    .values({ email: "b@lab.test", name: "B", passwordHash: stored, role: "member" })
    .returning();
  if (!user) throw new Error("no user");
  const session = await createSession(db, user.id, 3600);
  const token = await createApiToken(db, { userId: user.id, name: "bench" });
  const N = 500;
  let t0 = performance.now();
  for (let i = 0; i < N; i++) await principalBySession(db, session.token);
  const sessionUs = (ms(t0) * 1000) / N;
  t0 = performance.now();
  for (let i = 0; i < N; i++) await principalByApiToken(db, token.token);
  const tokenUs = (ms(t0) * 1000) / N;
  console.log(
    JSON.stringify({
      bench: "auth",
      scrypt: "N=2^15,r=8,p=1",
      hashMsMedian: Math.round(median(hashes)),
      verifyMsMedian: Math.round(median(verifies)),
      loginsPerSecPerCore: Math.round(1000 / median(verifies)),
      sessionLookupUs: Math.round(sessionUs),
      apiTokenLookupUs: Math.round(tokenUs),
      lookups: N,
    }),
  );
} finally {
  await database.close();
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
}
