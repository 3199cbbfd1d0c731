"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { Button } from "../_components/Button";
import { describeError } from "../../client/errors";
import { useTRPC } from "../_lib/trpc";
import { cpuDemoForm, type ExperimentForm } from "./form";
import type { ModelCheck } from "./ModelPicker";

// The CPU demo preset: one click fills the form with the recipe `npm run demo` runs (core
// demo/cpu-demo.ts): the built-in learnable family's frozen split, the reference oracle, and a tiny
// base warmed on that split's train tasks, built on an agent; then the base is checked like any
// other. The user reads the recipe and starts it. `auto`: the checklist's link applies it at once.

export function CpuDemoPreset({
  setF,
  check,
  auto,
}: {
  setF: (next: (cur: ExperimentForm) => ExperimentForm) => void;
  check: ModelCheck;
  auto: boolean;
}) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const prepare = useMutation(trpc.experiments.cpuDemo.mutationOptions());
  const [error, setError] = useState<unknown>(null);
  const [ready, setReady] = useState(false);
  const started = useRef(false);

  const apply = async () => {
    setError(null);
    setReady(false);
    try {
      const setup = await prepare.mutateAsync();
      // The new split and provider must be options of the form's selects before they are chosen.
      await Promise.all([
        qc.invalidateQueries({ queryKey: trpc.splits.list.queryKey() }),
        qc.invalidateQueries({ queryKey: trpc.providers.list.queryKey() }),
      ]);
      setF((cur) => cpuDemoForm(cur, setup));
      const path = await check.awaitTiny(setup.tinyModelJobId);
      setF((cur) => ({ ...cur, baseModel: path, baseRevision: "" }));
      await check.run(path, "");
      setReady(true);
    } catch (err) {
      setError(err);
    }
  };

  useEffect(() => {
    if (!auto || started.current) return;
    started.current = true;
    void apply();
    // Once, on arrival from the checklist's link.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [auto]);

  return (
    <section
      aria-label="CPU demo preset"
      className="flex flex-wrap items-start justify-between gap-3 rounded-lg border border-blue-200 bg-blue-50 p-3 text-sm"
    >
      <div className="min-w-0 flex-1 space-y-1">
        <p className="font-medium text-zinc-800">No GPU? The CPU demo preset</p>
        <p className="text-xs text-zinc-600">
          A recipe that learns on 2 CPU cores in about 15 minutes: the built-in learnable family (synthetic one-bug
          repairs), its frozen split, the reference oracle as teacher, and a tiny base warmed up on the split&apos;s
          train tasks (built on an agent in a few minutes). Its report shows that the pipeline detects a real gain; it
          says nothing about real models.
        </p>
        {ready ? (
          <p className="text-xs font-medium text-emerald-700" role="status">
            The preset is filled in and its base is checked: review the recipe, then Create and start.
          </p>
        ) : null}
        {error ? (
          <p className="text-xs text-red-700" role="alert">
            The preset could not be prepared: {describeError(error).message}
          </p>
        ) : null}
      </div>
      <Button disabled={prepare.isPending || check.busy !== null} onClick={() => void apply()}>
        Use the CPU demo preset
      </Button>
    </section>
  );
}
