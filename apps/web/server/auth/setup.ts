import { adminExists, createSetupToken } from "@agentlab/db";
import type { Services } from "../services";

export const SETUP_LINK_TTL_S = 24 * 3600;
export const setupPath = (token: string): string => `/setup?token=${encodeURIComponent(token)}`;

/**
 * At start: when the lab has no admin yet, mints a one-time first-admin token and returns the
 * path of its setup page (the caller prints it with the public URL); null once an admin exists.
 * Each start replaces the previous unused link.
 */
export async function ensureFirstAdminLink(services: Pick<Services, "db" | "log">): Promise<string | null> {
  if (await adminExists(services.db)) return null;
  const t = await createSetupToken(services.db, { kind: "setup", role: "admin", ttlS: SETUP_LINK_TTL_S });
  // The token itself is never logged: whoever reads the logs must not be able to claim the lab.
  services.log.warn({ expiresAt: t.expiresAt }, "no admin yet: a one-time setup link was issued");
  return setupPath(t.token);
}
