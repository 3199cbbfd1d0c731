import { schema } from "@agentlab/db";
import type { Role } from "@agentlab/core";
import { appRouter } from "../../../apps/web/server/routers";
import { createCallerFactory } from "../../../apps/web/server/trpc/init";
import type { Services } from "../../../apps/web/server/services";

const createCaller = createCallerFactory(appRouter);
export type Caller = ReturnType<typeof createCaller>;

/** A tRPC caller acting as a new user of `role`, signed in by API token (no session, no CSRF). */
export async function callerAs(services: Services, role: Role, email = `${role}@lab.test`): Promise<Caller> {
  const [u] = await services.db.insert(schema.users).values({ email, name: role, passwordHash: "x", role }).returning();
  if (!u) throw new Error("no user");
  return createCaller({
    ...services,
    viewer: { userId: u.id, email: u.email, name: u.name, role, via: "token", csrfToken: null },
    csrfHeader: null,
    ip: "127.0.0.1",
    sessionToken: null,
    setCookie: () => {},
  });
}
