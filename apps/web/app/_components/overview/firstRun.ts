// The first-run checklist's steps, from what exists: pure, so the order and the "next step" rule
// are unit-tested without a browser.

export type FirstRunFacts = {
  agentsOnline: number;
  /** Online agents whose sandbox self-test passed (grade and audit jobs need one). */
  sandboxOk: number;
  pools: number;
  frozenSplits: number;
  providers: number;
  experiments: number;
  /** This server's own agent (the one `npm start` supervises); "off" when it runs none. */
  localAgent?: { state: "off" } | { state: "running"; restarts: number } | { state: "restarting"; retryInS: number };
};

function noAgentDetail(local: FirstRunFacts["localAgent"]): string {
  if (local?.state === "restarting")
    return `no agent online: the local agent stopped; this server restarts it in ${local.retryInS} s (the server log says why it stopped)`;
  if (local?.state === "running")
    return local.restarts
      ? `no agent online yet: the local agent was restarted (${local.restarts}×) and is connecting`
      : "no agent online yet: the local agent is starting and connects in a few seconds";
  return "no agent online: this server runs no local agent; enroll one from the Agents page";
}

export type Step = { key: string; title: string; done: boolean; detail: string; href: string; action: string };

export function firstRunSteps(f: FirstRunFacts): Step[] {
  return [
    {
      key: "agent",
      title: "An agent online with a working sandbox",
      done: f.sandboxOk > 0,
      href: "/agents",
      action: f.agentsOnline ? "Fix the sandbox" : "Enroll an agent",
      detail: f.sandboxOk
        ? `${f.sandboxOk} of ${f.agentsOnline} online agents passed the sandbox self-test`
        : f.agentsOnline
          ? `${f.agentsOnline} agent(s) online, none passed the sandbox self-test (install bubblewrap, then re-run it)`
          : noAgentDetail(f.localAgent),
    },
    {
      key: "pool",
      title: "A task pool",
      done: f.pools > 0,
      href: "/pools",
      action: "Import tasks",
      detail: f.pools ? `${f.pools} pool(s)` : "import a JSONL task file (the built-in pool loads at first start)",
    },
    {
      key: "split",
      title: "A frozen split",
      done: f.frozenSplits > 0,
      href: "/splits",
      action: "Create a split",
      detail: f.frozenSplits ? `${f.frozenSplits} frozen split(s)` : "split a pool into train/dev/test by source group",
    },
    {
      key: "provider",
      title: "A teacher provider",
      done: f.providers > 0,
      href: "/providers",
      action: "Add a provider",
      detail: f.providers
        ? `${f.providers} provider(s)`
        : "an OpenAI-compatible endpoint, or the reference oracle (one click below)",
    },
    {
      key: "experiment",
      title: "An experiment",
      done: f.experiments > 0,
      href: "/experiments/new",
      action: "Start an experiment",
      detail: f.experiments
        ? `${f.experiments} experiment(s)`
        : "train LoRA adapters and compare them with the base on the test split",
    },
  ];
}

/**
 * The shortest path to a first report that shows learning: the CPU demo preset makes its own split
 * of the built-in learnable pool and adds the reference oracle, so it needs only a working agent.
 * Offered until the lab has an experiment.
 */
export function cpuDemoShortcut(f: FirstRunFacts): { href: string; action: string; detail: string } | null {
  if (f.experiments > 0 || f.sandboxOk === 0) return null;
  return {
    href: "/experiments/new?preset=cpu-demo",
    action: "Start the CPU demo",
    detail:
      "no GPU needed: a tiny base warmed on the built-in learnable family's train tasks, a report with a real gain in about 15 minutes on 2 cores",
  };
}

/** The first step not done, or null when all are. */
export const nextStep = (steps: readonly Step[]): Step | null => steps.find((s) => !s.done) ?? null;
