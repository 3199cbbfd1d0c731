"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { useTRPC } from "../_lib/trpc";

const field = "mt-1 block h-8 rounded-md border border-zinc-300 px-2 text-sm";

/** Creates a frozen split; asking again with the same pool snapshot and parameters opens the existing one. */
export function CreateSplit({ poolId }: { poolId?: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const pools = useQuery(trpc.pools.list.queryOptions(undefined, { enabled: !poolId }));
  const [pool, setPool] = useState(poolId ?? "");
  const [seed, setSeed] = useState("0");
  const [dev, setDev] = useState("0.1");
  const [test, setTest] = useState("0.2");
  const [name, setName] = useState("");
  const [includeFailed, setIncludeFailed] = useState(false);
  const create = useMutation(
    trpc.splits.create.mutationOptions({
      onSuccess: (s) => {
        void queryClient.invalidateQueries({ queryKey: trpc.splits.pathKey() });
        void queryClient.invalidateQueries({ queryKey: trpc.pools.pathKey() });
        router.push(`/splits/${s.id}`);
      },
    }),
  );
  const submit = () =>
    create.mutate({
      poolId: pool,
      seed: Number(seed),
      devRatio: Number(dev),
      testRatio: Number(test),
      name: name.trim() || undefined,
      includeFailedAudits: includeFailed,
    });
  return (
    <div className="space-y-2">
      <div className="flex flex-wrap items-end gap-3 text-xs text-zinc-600">
        {poolId ? null : (
          <label>
            Pool
            <select className={`${field} bg-white`} value={pool} onChange={(e) => setPool(e.target.value)}>
              <option value="">choose…</option>
              {(pools.data ?? []).map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name} ({p.taskCount})
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          Seed
          <input
            className={`${field} w-24`}
            type="number"
            min={0}
            value={seed}
            onChange={(e) => setSeed(e.target.value)}
          />
        </label>
        <label>
          Dev ratio
          <input
            className={`${field} w-20`}
            type="number"
            step="0.05"
            min={0}
            max={0.9}
            value={dev}
            onChange={(e) => setDev(e.target.value)}
          />
        </label>
        <label>
          Test ratio
          <input
            className={`${field} w-20`}
            type="number"
            step="0.05"
            min={0}
            max={0.9}
            value={test}
            onChange={(e) => setTest(e.target.value)}
          />
        </label>
        <label>
          Name (optional)
          <input className={`${field} w-56`} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label
          className="flex items-center gap-1"
          title="Tasks whose newest admission audit failed are left out of the split by default. Including them is recorded on the split."
        >
          <input type="checkbox" checked={includeFailed} onChange={(e) => setIncludeFailed(e.target.checked)} />
          include tasks that failed their admission audit (recorded override)
        </label>
        <Button variant="primary" disabled={!pool || create.isPending} onClick={submit}>
          {create.isPending ? "Splitting…" : "Create frozen split"}
        </Button>
      </div>
      {create.error ? <ErrorBox error={create.error} /> : null}
    </div>
  );
}
