import Link from "next/link";
import type { ReactNode } from "react";
import {
  answerRepeatsText,
  DATA_QUALITY_LABELS,
  formatDuration,
  hardwareText,
  trainingText,
  type ExperimentReport,
  type ReportHeader,
} from "@agentlab/core";
import { Badge } from "../_components/Badge";

// The report header: what was compared and how. With `links` the ids open their pages (the signed-in
// report); the share page passes links=false and shows the same facts as text.

const short = (h: string | null | undefined, n = 12) => (h ? h.slice(0, n) : "—");

function Hash({ value, n = 12 }: { value: string | null | undefined; n?: number }) {
  return (
    <span className="font-mono text-xs" title={value ?? undefined}>
      {short(value, n)}
    </span>
  );
}

function Ref({ links, href, children }: { links: boolean; href: string; children: ReactNode }) {
  return links ? (
    <Link href={href} className="text-blue-700 hover:underline">
      {children}
    </Link>
  ) : (
    <>{children}</>
  );
}

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="grid grid-cols-[10rem_1fr] gap-3 py-1.5">
      <dt className="text-xs font-semibold uppercase tracking-wide text-zinc-500">{label}</dt>
      <dd className="text-[13px] text-zinc-800">{children}</dd>
    </div>
  );
}

export function ReportHeaderView({ report, links }: { report: ExperimentReport; links: boolean }) {
  const h: ReportHeader | undefined = report.header;
  if (!h)
    return (
      <p className="text-sm text-zinc-600">
        This report was built before reports recorded what they compared; re-run the report stage to add the header.
      </p>
    );
  const b = h.baseModel;
  const p = report.protocol.protocol;
  return (
    <dl className="divide-y divide-zinc-100" data-testid="report-header">
      <Row label="Experiment">
        <Ref links={links} href={`/experiments/${h.experiment.id}`}>
          {h.experiment.name}
        </Ref>{" "}
        · created {new Date(h.experiment.createdAt).toLocaleString()} · report{" "}
        {new Date(h.experiment.reportAt).toLocaleString()} · took{" "}
        <span data-testid="header-duration">{formatDuration(h.experiment.durationS)}</span>
      </Row>
      <Row label="Base model">
        <span className="font-mono text-xs">{b.ref}</span> ({b.source}
        {b.revision ? `, revision asked ${b.revision}` : ""}) · resolved revision {b.resolvedRevision ?? "—"} · weights
        sha256 <Hash value={b.weightsSha256} />
      </Row>
      <Row label="Adapters">
        {h.adapters.length === 0 ? (
          "none trained"
        ) : (
          <table className="text-[13px]" data-testid="header-adapters">
            <thead>
              <tr className="text-left text-[11px] uppercase tracking-wide text-zinc-500">
                <th className="pr-4 font-semibold">adapter</th>
                <th className="pr-4 font-semibold">method</th>
                <th className="pr-4 font-semibold">sha256</th>
                <th className="pr-4 font-semibold">train job</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {h.adapters.map((a) => (
                <tr key={`${a.seed}:${a.epoch}`}>
                  <td className="pr-4">
                    seed {a.seed} · epoch {a.epoch}
                  </td>
                  <td className="pr-4">{a.method ?? "—"}</td>
                  <td className="pr-4">
                    <Hash value={a.sha256} />
                  </td>
                  <td className="pr-4">
                    {a.trainJobId ? (
                      <Ref links={links} href={`/jobs/${a.trainJobId}`}>
                        <Hash value={a.trainJobId} n={8} />
                      </Ref>
                    ) : (
                      "—"
                    )}
                  </td>
                  <td className="space-x-1">
                    {a.selected && <Badge tone="green">selected</Badge>}
                    {a.onTest && <Badge tone="blue">on test</Badge>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Row>
      <Row label="SFT dataset">
        {h.dataset ? (
          <>
            <Ref links={links} href={`/datasets/${h.dataset.id}`}>
              {h.dataset.name}
            </Ref>
            : {h.dataset.samples} samples over {h.dataset.tasks} train tasks ({h.dataset.oracleSamples} from the
            reference oracle)
            {h.dataset.quality && h.dataset.quality !== "verified" ? (
              <strong> · answers {DATA_QUALITY_LABELS[h.dataset.quality]}</strong>
            ) : null}{" "}
            · {h.dataset.supervisedTokens ?? "—"} supervised tokens · hash <Hash value={h.dataset.hash} />
          </>
        ) : (
          "none recorded"
        )}
      </Row>
      <Row label="Training">{trainingText(h.training)}</Row>
      <Row label="Split">
        {h.split ? (
          <>
            <Ref links={links} href={`/splits/${h.split.id}`}>
              {h.split.name}
            </Ref>{" "}
            (seed {h.split.seed}) · train {h.split.counts.train.tasks} tasks / {h.split.counts.train.groups} groups ·
            dev {h.split.counts.dev.tasks} / {h.split.counts.dev.groups} · test {h.split.counts.test.tasks} /{" "}
            {h.split.counts.test.groups} · manifest <Hash value={h.split.manifestHash} />
          </>
        ) : (
          "—"
        )}
      </Row>
      {h.answerRepeats && answerRepeatsText(h.answerRepeats) && (
        <Row label="Answers">
          <strong className="text-amber-800" data-testid="answer-repeats">
            {answerRepeatsText(h.answerRepeats)}
          </strong>
        </Row>
      )}
      <Row label="Protocol">
        {p
          ? `${p.backend} ${p.backendVersion} · ${p.device} · ${p.dtype} · ${p.decoding.doSample ? `sampling T=${p.decoding.temperature} top-p ${p.decoding.topP}` : "greedy"} · max ${p.maxNewTokens} new tokens · decoding from the ${p.generationConfig} · grader ${p.graderVersion}`
          : "—"}
        {" · "}
        {report.protocol.ok ? (
          "identical for every compared evaluation"
        ) : (
          <strong className="text-red-700">MISMATCH</strong>
        )}
      </Row>
      <Row label="Jobs">
        {h.jobs.map((j) => `${j.count} ${j.type}`).join(" · ") || "none"}
        {links && (
          <>
            {" "}
            ·{" "}
            <Ref links={links} href={`/experiments/${h.experiment.id}`}>
              the experiment&apos;s jobs
            </Ref>
          </>
        )}
      </Row>
      <Row label="Hardware">
        {h.hardware.length === 0 ? (
          "no agent recorded"
        ) : (
          <ul>
            {h.hardware.map((a) => (
              <li key={a.id}>{hardwareText(a)}</li>
            ))}
          </ul>
        )}
      </Row>
    </dl>
  );
}
