"use client";

import { useState } from "react";

/** An id or hash in monospace, shortened, with the full value in the tooltip and a copy button. */
export function Mono({
  value,
  chars = 8,
  copy = false,
}: {
  value: string | null | undefined;
  chars?: number;
  copy?: boolean;
}) {
  const [copied, setCopied] = useState(false);
  if (!value) return <span className="text-zinc-400">—</span>;
  return (
    <span className="inline-flex items-center gap-1">
      <code title={value} className="font-mono text-[12px] text-zinc-700">
        {value.length > chars ? value.slice(0, chars) : value}
      </code>
      {copy ? (
        <button
          type="button"
          className="rounded px-1 text-[11px] text-zinc-400 hover:bg-zinc-100 hover:text-zinc-700"
          onClick={() => {
            void navigator.clipboard?.writeText(value).then(() => {
              setCopied(true);
              setTimeout(() => setCopied(false), 1200);
            });
          }}
        >
          {copied ? "copied" : "copy"}
        </button>
      ) : null}
    </span>
  );
}
