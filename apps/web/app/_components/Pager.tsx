import { Button } from "./Button";

/** "51–100 of 1,234" with Previous / Next, for lists read one offset page at a time. */
export function Pager({
  offset,
  limit,
  total,
  onOffset,
  testId,
}: {
  offset: number;
  limit: number;
  total: number;
  onOffset: (offset: number) => void;
  testId?: string;
}) {
  const last = Math.min(offset + limit, total);
  return (
    <span className="flex items-center gap-2 text-xs text-zinc-600" data-testid={testId}>
      {total ? `${(offset + 1).toLocaleString()}–${last.toLocaleString()}` : "0"} of {total.toLocaleString()}
      <Button size="sm" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - limit))}>
        Previous
      </Button>
      <Button size="sm" disabled={last >= total} onClick={() => onOffset(offset + limit)}>
        Next
      </Button>
    </span>
  );
}
