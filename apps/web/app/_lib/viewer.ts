"use client";

import { useQuery } from "@tanstack/react-query";
import { z } from "zod";
import { Role } from "@agentlab/core/security/roles";

export type { Role };
const Person = z.object({ name: z.string().optional(), email: z.string().optional(), role: Role.optional() });

export type ViewerState =
  | { status: "loading" }
  // The server has no auth router (yet): pages behave as before auth and the server still decides.
  | { status: "unavailable" }
  | { status: "signed-out" }
  | { status: "signed-in"; name: string; email: string; role: Role | null };

/** Reads the viewer out of whatever `auth.me` returns: the principal itself, or one nested under `user`/`viewer`. */
export function parseMe(data: unknown): ViewerState {
  if (data === null || data === undefined) return { status: "signed-out" };
  const nested = z.object({ user: Person.nullable().optional(), viewer: Person.nullable().optional() }).safeParse(data);
  const candidate = nested.success ? (nested.data.user ?? nested.data.viewer ?? data) : data;
  const p = Person.safeParse(candidate);
  if (!p.success || (!p.data.email && !p.data.name)) return { status: "signed-out" };
  return {
    status: "signed-in",
    name: p.data.name ?? p.data.email ?? "",
    email: p.data.email ?? "",
    role: p.data.role ?? null,
  };
}

// auth.me is probed over plain HTTP rather than through the typed client so the shell compiles and
// runs whether or not the auth router is registered.
async function fetchMe(): Promise<ViewerState> {
  const res = await fetch("/api/trpc/auth.me", { credentials: "same-origin", headers: { accept: "application/json" } });
  if (res.status === 404) return { status: "unavailable" };
  if (res.status === 401) return { status: "signed-out" };
  if (!res.ok) throw new Error(`auth.me answered HTTP ${res.status}`);
  const body = (await res.json()) as { result?: { data?: unknown } };
  return parseMe(body.result?.data);
}

export function useViewer(): ViewerState {
  const q = useQuery({ queryKey: ["agentlab", "auth.me"], queryFn: fetchMe, staleTime: 60_000, retry: 1 });
  if (q.data) return q.data;
  return q.isError ? { status: "unavailable" } : { status: "loading" };
}

/** Whether to offer an action needing `role`. The server enforces roles; this only hides dead buttons. */
export function canAct(viewer: ViewerState, role: Role): boolean {
  const rank: Record<Role, number> = { viewer: 0, member: 1, admin: 2 };
  if (viewer.status === "unavailable") return true;
  if (viewer.status !== "signed-in") return false;
  return viewer.role !== null && rank[viewer.role] >= rank[role];
}
