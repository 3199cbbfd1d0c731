// The compare view's recipe and protocol side by side: every leaf of each run's stored config and
// evaluation protocol as one row, marked where the runs differ, so a difference hidden in a field
// the figures table does not show (the prompt template, max new tokens, a DPO β) is seen. A
// difference in the evaluation protocol makes the runs' figures incomparable, which is warned.

export type SideBySideRow = { field: string; values: (string | null)[]; differs: boolean };

/** Leaves of a JSON value as dotted paths (`training.lora.r`), arrays as one JSON value each. */
export function flattenLeaves(value: unknown, prefix = ""): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (v: unknown, path: string) => {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const entries = Object.entries(v);
      if (entries.length === 0) out.set(path, "{}");
      for (const [k, x] of entries) walk(x, path ? `${path}.${k}` : k);
    } else out.set(path, typeof v === "string" ? v : JSON.stringify(v ?? null));
  };
  walk(value, prefix);
  return out;
}

/** One row per field any run has; a run without the field shows null (older recipes). */
export function sideBySide(values: readonly unknown[], opts: { skip?: readonly string[] } = {}): SideBySideRow[] {
  const flat = values.map((v) => flattenLeaves(v));
  const fields = [...new Set(flat.flatMap((f) => [...f.keys()]))]
    .filter((f) => !(opts.skip ?? []).some((s) => f === s || f.startsWith(`${s}.`)))
    .sort();
  return fields.map((field) => {
    const vs = flat.map((f) => f.get(field) ?? null);
    return { field, values: vs, differs: new Set(vs).size > 1 };
  });
}

/**
 * The recipe (config) and the evaluation protocol of each run. The name, tags and the model part
 * of the protocol (the base model's resolved weights, a recipe difference shown with the recipe)
 * are left out of the protocol comparison.
 */
export function compareRecipes(runs: readonly { config: unknown; protocol: unknown }[]) {
  const recipe = sideBySide(
    runs.map((r) => r.config),
    { skip: ["name"] },
  );
  const protocol = sideBySide(
    runs.map((r) => r.protocol),
    { skip: ["model"] },
  );
  return { recipe, protocol, protocolsDiffer: protocol.some((r) => r.differs) };
}
