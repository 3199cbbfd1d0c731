// The work an experiment's evaluations ask for, shown on the form before it starts,
// and its time on the online agents from their recent measured throughput. Dev evaluates the base
// and every seed's every epoch; test the base and each seed's best dev epoch (the per-seed table).

export type EvaluationWork = {
  samples: number;
  dev: { tasks: number; models: number; answers: number };
  test: { tasks: number; models: number; answers: number };
  /** Answers to generate and candidates to grade: one grade per answer. */
  answers: number;
};

export function evaluationWork(p: {
  devTasks: number;
  testTasks: number;
  seeds: number;
  epochs: number;
  samples: number;
}): EvaluationWork {
  const devModels = 1 + p.seeds * p.epochs;
  const testModels = 1 + p.seeds;
  const dev = { tasks: p.devTasks, models: devModels, answers: p.devTasks * devModels * p.samples };
  const test = { tasks: p.testTasks, models: testModels, answers: p.testTasks * testModels * p.samples };
  return { samples: p.samples, dev, test, answers: dev.answers + test.answers };
}

/** Measured over recent succeeded jobs: agent-seconds per item (an answer generated, a candidate graded). */
export type Throughput = {
  generate: { secondsPerItem: number; items: number; jobs: number } | null;
  grade: { secondsPerItem: number; items: number; jobs: number } | null;
  /** Online, unrevoked, not draining agents: the work is assumed shared evenly between them. */
  agents: number;
};

export type WorkEstimate =
  | { kind: "estimate"; generateS: number; gradeS: number; totalS: number; agents: number; note: string }
  | { kind: "unknown"; reason: string };

/** The estimate, or why there is none ("no measurement yet" when no such job has finished). */
export function estimateWork(work: EvaluationWork, t: Throughput): WorkEstimate {
  const missing = [!t.generate && "generate", !t.grade && "grade"].filter(Boolean);
  if (missing.length) return { kind: "unknown", reason: `no measurement yet: no finished ${missing.join(" or ")} job` };
  if (t.agents === 0) return { kind: "unknown", reason: "no agent is online" };
  const generateS = (work.answers * (t.generate?.secondsPerItem ?? 0)) / t.agents;
  const gradeS = (work.answers * (t.grade?.secondsPerItem ?? 0)) / t.agents;
  return {
    kind: "estimate",
    generateS,
    gradeS,
    totalS: generateS + gradeS,
    agents: t.agents,
    note:
      `from ${t.generate?.jobs ?? 0} recent generate jobs (${t.generate?.items ?? 0} answers) and ${t.grade?.jobs ?? 0} grade jobs ` +
      `(${t.grade?.items ?? 0} candidates), shared evenly over ${t.agents} online agent${t.agents === 1 ? "" : "s"}; training time not included`,
  };
}
