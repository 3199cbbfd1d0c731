"use client";

import { use, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { modelKey } from "@agentlab/core";
import { useTRPC, useTRPCClient } from "../../_lib/trpc";
import { ErrorBox } from "../../_components/ErrorBox";
import { ReportView } from "../ReportView";
import { ShareLinks } from "../ShareLinks";

export default function ReportPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = use(params);
  const trpc = useTRPC();
  const client = useTRPCClient();
  const q = useQuery(trpc.reports.byId.queryOptions({ id }));
  const [task, setTask] = useState<{ split: "dev" | "test"; taskId: string } | null>(null);
  const detail = useQuery({ ...trpc.reports.taskDetail.queryOptions({ reportId: id, split: task?.split ?? "test", taskId: task?.taskId ?? "x" }), enabled: task !== null });
  const download = async (format: "json" | "csv" | "markdown") => {
    const r = await client.reports.export.query({ id, format });
    const url = URL.createObjectURL(new Blob([r.content], { type: "text/plain" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = `report-${id}.${format === "markdown" ? "md" : format}`;
    a.click();
    URL.revokeObjectURL(url);
  };
  if (q.error) return <ErrorBox error={q.error} />;
  if (!q.data) return <p>Loading…</p>;
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">{q.data.report.name}</h1>
      <div className="flex gap-2">
        {(["json", "csv", "markdown"] as const).map((f) => <button key={f} className="rounded border px-2 py-1 text-sm" onClick={() => void download(f)}>Export {f}</button>)}
      </div>
      <ShareLinks reportId={id} />
      <ReportView report={q.data.report} onTask={(split, taskId) => setTask({ split, taskId })} />
      {task && detail.data && (
        <div className="grid grid-cols-3 gap-2 text-xs">
          <pre className="overflow-auto border p-2">{detail.data.buggy.map((f) => `# ${f.path} (buggy)\n${f.content}`).join("\n")}</pre>
          {detail.data.answers.filter((a) => a.modelKey === "base" || a.modelKey === modelKey(q.data.report.outcome.selected)).map((a) => (
            <pre key={a.modelKey} className="overflow-auto border p-2">{`${a.modelKey}: ${a.verdict}\n\n${a.answer}\n\n${JSON.stringify(a.grade, null, 1).slice(0, 4000)}`}</pre>
          ))}
        </div>
      )}
    </div>
  );
}
