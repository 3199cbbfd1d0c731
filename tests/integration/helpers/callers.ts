import { schema } from "@agentlab/db";
import type { Role } from "@agentlab/core";
import { appRouter } from "../../../apps/web/server/routers";
import { createCallerFactory } from "../../../apps/web/server/trpc/init";
import type { Services } from "../../../apps/web/server/services";

const createCaller = createCallerFactory(appRouter);
export type Caller = ReturnType<typeof createCaller>;

/** A tRPC caller acting as a new user of `role`, signed in by API token (no session, no CSRF). */
export async function callerAs(services: Services, role: Role, email = `${role}@lab.test`): Promise<Caller> {
  return (await userCaller(services, role, email)).caller;
}

/** As callerAs, with the new user's id (for what records its creator). */
export async function userCaller(services: Services, role: Role, email = `${role}@lab.test`) {
  const [u] = await services.db.insert(schema.users).values({ email, name: role, passwordHash: "x", role }).returning();
  if (!u) throw new Error("no user");
  const caller = createCaller({
    ...services,
    viewer: { userId: u.id, email: u.email, name: u.name, role, via: "token", csrfToken: null },
    ...noSession,
  });
  return { userId: u.id, caller };
}

const noSession = { csrfHeader: null, ip: "127.0.0.1", sessionToken: null, setCookie: () => {} };

/** A tRPC caller with no viewer at all (a share link's holder, an anonymous request). */
export const anonymousCaller = (services: Services): Caller =>
  createCaller({ ...services, viewer: null, ...noSession });
