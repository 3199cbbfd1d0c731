"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { Section } from "../_components/PageHeader";
import { Table } from "../_components/Table";
import { useTRPC } from "../_lib/trpc";

const PAGE = 25;

/** The server marks matches as «word»; shown highlighted, never as HTML from the server. */
export function Snippet({ text }: { text: string }) {
  return (
    <>
      {text.split(/(«[^»]*»)/).map((part, i) =>
        part.startsWith("«") && part.endsWith("»") ? (
          <mark key={i} className="rounded bg-amber-100 px-0.5 text-zinc-900">
            {part.slice(1, -1)}
          </mark>
        ) : (
          <span key={i}>{part}</span>
        ),
      )}
    </>
  );
}

/** Full-text search in the pool's task instructions (words, "a phrase", or, -word), best match first. */
export function InstructionSearch({ poolId }: { poolId: string }) {
  const trpc = useTRPC();
  const [input, setInput] = useState("");
  const [text, setText] = useState("");
  const [offset, setOffset] = useState(0);
  useEffect(() => {
    const t = setTimeout(() => {
      setText(input.trim());
      setOffset(0);
    }, 300);
    return () => clearTimeout(t);
  }, [input]);
  const page = useQuery(
    trpc.tasks.search.queryOptions(
      { poolId, text, offset, limit: PAGE },
      { enabled: text.length > 0, placeholderData: (prev) => prev },
    ),
  );
  type Row = NonNullable<typeof page.data>["items"][number];
  const total = page.data?.total ?? 0;
  const shown = page.data?.items.length ?? 0;
  return (
    <Section
      title="Search instructions"
      actions={
        <input
          aria-label="Search instructions"
          className="h-7 w-72 rounded-md border border-zinc-300 px-2 text-xs"
          placeholder='words, "a phrase", or, -word'
          value={input}
          onChange={(e) => setInput(e.target.value)}
        />
      }
    >
      {page.error ? <ErrorBox error={page.error} /> : null}
      {text && page.data ? (
        <>
          <p className="mb-2 text-xs text-zinc-500" data-testid="search-total">
            {total === 0
              ? `No instruction matches "${text}".`
              : `${offset + 1}–${offset + shown} of ${total.toLocaleString()} tasks matching "${text}"`}
          </p>
          {total > 0 ? (
            <Table<Row>
              bare
              rows={page.data.items}
              rowKey={(t) => t.id}
              rowHref={(t) => `/tasks/${t.id}`}
              columns={[
                { key: "id", header: "Task", cell: (t) => <span className="font-mono text-xs">{t.taskId}</span> },
                { key: "group", header: "Group", cell: (t) => <span className="font-mono text-xs">{t.groupKey}</span> },
                {
                  key: "snippet",
                  header: "Instruction",
                  className: "max-w-xl text-zinc-700",
                  cell: (t) => <Snippet text={t.snippet} />,
                },
              ]}
            />
          ) : null}
          {total > PAGE ? (
            <div className="mt-3 flex justify-end gap-2">
              <Button size="sm" disabled={offset === 0} onClick={() => setOffset((o) => Math.max(0, o - PAGE))}>
                Previous
              </Button>
              <Button size="sm" disabled={offset + PAGE >= total} onClick={() => setOffset((o) => o + PAGE)}>
                Next
              </Button>
            </div>
          ) : null}
        </>
      ) : (
        <p className="text-xs text-zinc-500">
          Searches the instruction text of every task in this pool (English stemming: “parsing” finds “parse”).
        </p>
      )}
    </Section>
  );
}
