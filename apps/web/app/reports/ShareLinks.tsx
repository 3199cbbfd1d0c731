"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { CopyButton } from "../_components/CopyButton";
import { useTRPC } from "../_lib/trpc";

// A link handed outside the team should not live forever by accident: a week unless chosen otherwise.
const EXPIRY_CHOICES: { label: string; hours: number | undefined }[] = [
  { label: "in 1 day", hours: 24 },
  { label: "in 7 days", hours: 24 * 7 },
  { label: "in 30 days", hours: 24 * 30 },
  { label: "never", hours: undefined },
];

/** Creates read-only links to this report (or study) and revokes them; a token is shown once, when created. */
export function ShareLinks(target: { reportId: string } | { studyId: string }) {
  const trpc = useTRPC();
  const [expiry, setExpiry] = useState("in 7 days");
  const of = "reportId" in target ? { reportId: target.reportId } : { studyId: target.studyId };
  const links = useQuery(trpc.share.list.queryOptions(of));
  const create = useMutation(trpc.share.create.mutationOptions({ onSuccess: () => void links.refetch() }));
  const revoke = useMutation(trpc.share.revoke.mutationOptions({ onSuccess: () => void links.refetch() }));
  const origin = typeof window === "undefined" ? "" : window.location.origin;
  return (
    <div className="space-y-2 text-sm" aria-label="share links">
      <div className="flex flex-wrap items-center gap-2">
        <label className="flex items-center gap-1 text-xs text-zinc-600">
          Expires
          <select
            className="rounded border px-1 py-0.5 text-xs"
            aria-label="share link expiry"
            value={expiry}
            onChange={(e) => setExpiry(e.target.value)}
          >
            {EXPIRY_CHOICES.map((c) => (
              <option key={c.label} value={c.label}>
                {c.label}
              </option>
            ))}
          </select>
        </label>
        <button
          className="rounded border px-2 py-1 text-sm"
          onClick={() =>
            create.mutate({ ...of, expiresInHours: EXPIRY_CHOICES.find((c) => c.label === expiry)?.hours })
          }
          disabled={create.isPending}
        >
          Create share link
        </button>
        {create.data && (
          <>
            <span className="font-mono text-xs" data-testid="share-url">{`${origin}${create.data.path}`}</span>
            <CopyButton text={`${origin}${create.data.path}`} label="Copy link" />
            <span className="text-xs text-zinc-500">shown once; only its hash is stored</span>
          </>
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
