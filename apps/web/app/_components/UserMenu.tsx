"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { useState } from "react";
import { useQueryClient } from "@tanstack/react-query";
import { CSRF_HEADER, csrfTokenOf } from "../_lib/cookies";
import { useViewer } from "../_lib/viewer";
import { Badge } from "./Badge";

// Sign-out goes over plain HTTP for the same reason auth.me does: the shell must not depend on the
// auth router's types. tRPC takes a mutation as a POST with the input as the JSON body.
async function signOut() {
  const headers: Record<string, string> = { "content-type": "application/json" };
  const csrf = csrfTokenOf(document.cookie);
  if (csrf) headers[CSRF_HEADER] = csrf;
  await fetch("/api/trpc/auth.logout", { method: "POST", headers, credentials: "same-origin", body: "{}" });
}

export function UserMenu() {
  const viewer = useViewer();
  const pathname = usePathname() ?? "/";
  const queryClient = useQueryClient();
  const [busy, setBusy] = useState(false);

  if (viewer.status === "loading") return <div className="h-6 w-24 animate-pulse rounded bg-zinc-100" />;
  if (viewer.status === "unavailable")
    return (
      <span className="text-xs text-zinc-400" title="The server has no auth router">
        auth not configured
      </span>
    );
  if (viewer.status === "signed-out") {
    return (
      <Link
        href={`/login?next=${encodeURIComponent(pathname)}`}
        className="rounded-md border border-zinc-300 px-2.5 py-1 text-[13px] font-medium text-zinc-800 hover:bg-zinc-50"
      >
        Sign in
      </Link>
    );
  }
  return (
    <div className="flex items-center gap-2 text-[13px]">
      <span className="max-w-40 truncate text-zinc-700" title={viewer.email}>
        {viewer.name}
      </span>
      {viewer.role ? <Badge>{viewer.role}</Badge> : null}
      <button
        type="button"
        disabled={busy}
        className="rounded-md px-2 py-1 text-zinc-500 hover:bg-zinc-100 hover:text-zinc-800 disabled:opacity-50"
        onClick={async () => {
          setBusy(true);
          try {
            await signOut();
          } finally {
            queryClient.clear();
            // A full page load on purpose: nothing of the signed-out session survives in client state.
            // eslint-disable-next-line @next/next/no-location-assign-relative-destination
            window.location.assign("/login");
          }
        }}
      >
        Sign out
      </button>
    </div>
  );
}
