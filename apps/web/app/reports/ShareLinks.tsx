"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useTRPC } from "../_lib/trpc";

/** Creates read-only links to this report and revokes them; a token is shown once, when created. */
export function ShareLinks({ reportId }: { reportId: string }) {
  const trpc = useTRPC();
  const links = useQuery(trpc.share.list.queryOptions({ reportId }));
  const create = useMutation(trpc.share.create.mutationOptions({ onSuccess: () => void links.refetch() }));
  const revoke = useMutation(trpc.share.revoke.mutationOptions({ onSuccess: () => void links.refetch() }));
  const origin = typeof window === "undefined" ? "" : window.location.origin;
  return (
    <div className="space-y-2 text-sm" aria-label="share links">
      <div className="flex flex-wrap items-center gap-2">
        <button
          className="rounded border px-2 py-1 text-sm"
          onClick={() => create.mutate({ reportId })}
          disabled={create.isPending}
        >
          Create share link
        </button>
        {create.data && (
          <span className="font-mono text-xs" data-testid="share-url">{`${origin}${create.data.path}`}</span>
        )}
      </div>
      {(links.data ?? []).length > 0 && (
        <ul className="space-y-1 text-xs">
          {(links.data ?? []).map((l) => (
            <li key={l.id} className="flex items-center gap-2">
              <span className="font-mono">{l.id.slice(0, 8)}</span>
              <span>
                {l.revokedAt
                  ? "revoked"
                  : l.expiresAt
                    ? `expires ${new Date(l.expiresAt).toLocaleString()}`
                    : "no expiry"}
              </span>
              {!l.revokedAt && (
                <button
                  className="rounded border px-1.5 py-0.5"
                  onClick={() =>
                    // Revoking is final: anyone holding the link loses access and it cannot be restored.
                    window.confirm(
                      `Revoke share link ${l.id.slice(0, 8)}? Whoever has it loses access; this cannot be undone.`,
                    ) && revoke.mutate({ id: l.id })
                  }
                >
                  Revoke
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
