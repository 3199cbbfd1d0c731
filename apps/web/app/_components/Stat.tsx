import Link from "next/link";
import type { ReactNode } from "react";

export function Stat({
  label,
  value,
  hint,
  href,
}: {
  label: ReactNode;
  value: ReactNode;
  hint?: ReactNode;
  href?: string;
}) {
  const body = (
    <>
      <div className="text-[11px] font-semibold uppercase tracking-wide text-zinc-500">{label}</div>
      <div className="mt-1 text-2xl font-semibold tabular-nums tracking-tight text-zinc-900">{value}</div>
      {hint ? <div className="mt-0.5 text-xs text-zinc-500">{hint}</div> : null}
    </>
  );
  const cls = "block rounded-lg border border-zinc-200 bg-white px-4 py-3";
  return href ? (
    <Link href={href} className={`${cls} transition-colors hover:border-zinc-300 hover:bg-zinc-50/50`}>
      {body}
    </Link>
  ) : (
    <div className={cls}>{body}</div>
  );
}

/** Label/value pairs in two aligned columns, for detail pages. */
export function Fields({ items }: { items: { label: ReactNode; value: ReactNode }[] }) {
  return (
    <dl className="grid grid-cols-[max-content_1fr] gap-x-6 gap-y-1.5 text-[13px]">
      {items.map((it, i) => (
        <div key={i} className="contents">
          <dt className="text-zinc-500">{it.label}</dt>
          <dd className="min-w-0 break-words text-zinc-900">{it.value}</dd>
        </div>
      ))}
    </dl>
  );
}
