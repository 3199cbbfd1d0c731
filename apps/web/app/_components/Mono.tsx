import { CopyButton } from "./CopyButton";

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
  if (!value) return <span className="text-zinc-400">—</span>;
  return (
    <span className="inline-flex items-center gap-1">
      <code title={value} className="font-mono text-[12px] text-zinc-700">
        {value.length > chars ? value.slice(0, chars) : value}
      </code>
      {copy ? <CopyButton text={value} label="copy" variant="ghost" /> : null}
    </span>
  );
}
