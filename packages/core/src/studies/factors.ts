// Which recipe fields an arm changes: the leaf paths where two parsed recipes differ (arrays are
// compared whole: a seed list or LoRA target list is one setting), and what a declared factor
// covers (the field and everything under it; `method` also its `dpo` and `grpo` settings, which
// exist only with the methods that use them; `promptVariant` the prompts of training and of the
// evaluation at once: "does public context help" changes what the model sees in both).

const FACTOR_SPANS: Record<string, readonly string[]> = {
  method: ["method", "dpo", "grpo"],
  promptVariant: ["training.promptVariant", "evaluation.promptVariant"],
};

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The arm's recipe part deep-merged over the reference's (objects merged, everything else replaced). */
export function mergeRecipe(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isPlainObject(b) && isPlainObject(v) ? mergeRecipe(b, v) : v;
  }
  return out;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Dotted leaf paths where `a` and `b` differ (a field present on one side only counts). */
export function diffPaths(a: unknown, b: unknown, prefix = ""): string[] {
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => diffPaths(a[k], b[k], prefix ? `${prefix}.${k}` : k));
  }
  return same(a, b) ? [] : [prefix || "(recipe)"];
}

/** Whether a change at `path` is within the declared factor. */
export function factorCovers(factor: string, path: string): boolean {
  const roots = FACTOR_SPANS[factor] ?? [factor];
  return roots.some((r) => path === r || path.startsWith(`${r}.`));
}
