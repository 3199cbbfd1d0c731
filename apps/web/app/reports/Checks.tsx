import {
  ISOLATION_NOTE,
  answerContaminationLines,
  isolationText,
  modelLabel,
  noVerdictText,
  parsingText,
  type AnswerContamination,
  type ExperimentReport,
} from "@agentlab/core";
import { Badge } from "../_components/Badge";
import { Cell, Explain, StatTable } from "./StatsTables";

// What the numbers rest on: one protocol, contamination of test and dev, the pairs left out, and
// which verdicts came from the weaker in-process grading. The Markdown export prints the same.

const labelOf = (report: ExperimentReport, key: string) => {
  if (key === "base") return "base";
  const row = report.selection.table.find((r) => r.ref.model === "adapter" && `s${r.ref.seed}e${r.ref.epoch}` === key);
  return row ? modelLabel(row.ref) : key;
};

export function Checks({ report }: { report: ExperimentReport }) {
  const c = report.contamination;
  const dc = report.devContamination;
  const excluded = report.excluded ?? [];
  const iso = report.isolation;
  const inProc = iso?.filter((i) => i.inProcess > 0) ?? [];
  return (
    <div className="space-y-3 text-[13px]" data-testid="checks">
      <p>
        Protocol:{" "}
        {report.protocol.ok ? (
          "identical for every compared evaluation"
        ) : (
          <strong className="text-red-700">
            MISMATCH ({report.protocol.mismatches.map((m) => m.field).join(", ")})
          </strong>
        )}
      </p>
      <p>
        Contamination: {c.testTasksWithLeak} of {c.testTasks} test tasks overlap train, dev or the SFT data (exact{" "}
        {c.exactPairs}, normalized {c.normalizedPairs}, {c.n}-gram {c.ngramPairs})
      </p>
      {/* Reports stored before the evaluation protocol was recorded lack these fields. */}
      {dc && (
        <p>
          Dev contamination: {dc.testTasksWithLeak} of {dc.testTasks} dev tasks overlap the SFT data (exact{" "}
          {dc.exactPairs}, normalized {dc.normalizedPairs}, {dc.n}-gram {dc.ngramPairs})
        </p>
      )}
      {report.answerContamination && <AnswerSide a={report.answerContamination} />}
      <div data-testid="excluded">
        {excluded.length === 0 ? (
          <p>Excluded pairs: none recorded.</p>
        ) : (
          excluded.map((e) => (
            <p key={`${e.split}:${e.comparison}`}>
              Excluded · {e.split} · {e.comparison}: {e.note}
              {e.count > 0 && (
                <>
                  {" "}
                  (
                  <span className="font-mono text-xs">
                    {e.taskIds.slice(0, 8).join(", ")}
                    {e.count > 8 ? ", …" : ""}
                  </span>
                  )
                </>
              )}
            </p>
          ))
        )}
      </div>
      {report.parsing && (
        <div data-testid="answer-parsing">
          {report.parsing.map((p) => (
            <p key={`${p.split}:${p.modelKey}`} className={p.unparsed > 0 ? "text-amber-800" : undefined}>
              {p.unparsed > 0 && <Badge tone="amber">format</Badge>} Answers · {p.split} · {labelOf(report, p.modelKey)}
              : {parsingText(p)}
            </p>
          ))}
        </div>
      )}
      {report.noVerdict && (
        <div data-testid="no-verdict">
          {report.noVerdict.counts.map((c) => (
            <p key={`${c.split}:${c.modelKey}`}>
              No verdict · {c.split} · {labelOf(report, c.modelKey)}: {noVerdictText(c)}
            </p>
          ))}
          {report.noVerdict.asymmetry.map((a) => (
            <p key={`${a.split}:${a.otherKey}`} className={a.flagged ? "font-semibold text-red-700" : ""}>
              {a.split} · base vs {labelOf(report, a.otherKey)}: {a.note}
            </p>
          ))}
        </div>
      )}
      {iso && (
        <div data-testid="isolation">
          {inProc.length === 0 ? (
            <p>
              Grading isolation: <Badge tone="green">all verdicts from the isolated judge</Badge>
            </p>
          ) : (
            <>
              <p>
                Grading isolation:{" "}
                <Badge tone="amber">
                  {inProc.reduce((s, i) => s + i.inProcess, 0)} verdicts from in-process grading
                </Badge>
              </p>
              <StatTable
                head={["split", { label: "model", left: true }, "verdicts", { label: "in-process", left: true }]}
              >
                {iso.map((i) => (
                  <tr key={`${i.split}:${i.modelKey}`}>
                    <Cell>{i.split}</Cell>
                    <Cell left>{labelOf(report, i.modelKey)}</Cell>
                    <Cell>{i.total}</Cell>
                    <Cell left className={i.inProcess ? "text-amber-800" : ""}>
                      {isolationText(i)}
                    </Cell>
                  </tr>
                ))}
              </StatTable>
              <Explain>
                <p>{ISOLATION_NOTE}</p>
              </Explain>
            </>
          )}
        </div>
      )}
    </div>
  );
}

/** Test and dev references against the answers trained on; exact or normalized copies mark the report contaminated. */
function AnswerSide({ a }: { a: AnswerContamination }) {
  const lines = answerContaminationLines(a);
  return (
    <div data-testid="answer-contamination">
      {lines.map((l) => (
        <p key={l.text} className={l.contaminated ? "font-semibold text-red-700" : ""}>
          {l.contaminated ? <Badge tone="red">contaminated</Badge> : null} {l.text}
        </p>
      ))}
    </div>
  );
}
