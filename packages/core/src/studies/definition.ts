import { z } from "zod";
import { NAME_MAX_LENGTH } from "../names";
import { BaseModel, EvalProtocol, ExperimentConfig, type ExperimentConfigInput } from "../experiments/config";
import { issuesByField, type FieldIssues } from "../validation";
import { BUDGET_TOLERANCE } from "./budget";
import { diffPaths, factorCovers, isPlainObject, mergeRecipe } from "./factors";

// A study (brief §11): a reference arm and arms that each differ from it in one declared factor,
// all sharing the split, the base model, the evaluation protocol (sampling seed included) and the
// training seeds; the primary contrasts are declared up front and adjusted with Holm. Written as
// a YAML or JSON file (`agentlab studies create FILE`); each arm becomes one experiment.

const ArmName = z
  .string()
  .min(1)
  .max(60)
  .regex(/^[A-Za-z0-9][A-Za-z0-9 ._+-]*$/, "letters, digits, space, . _ + - (starting with a letter or digit)");

/** What an arm's recipe holds: every recipe field except the shared ones (SHARED_FIELDS). */
const RecipePart = z.record(z.string(), z.unknown());

/** Fields every arm shares, set once at the study's top level; never a factor. */
export const SHARED_FIELDS = ["name", "splitId", "baseModel", "evaluation", "seeds"] as const;

/**
 * The evaluation's one per-arm setting: what the prompts show (the public-context question). An
 * arm's (or the reference's) recipe may hold `evaluation: { promptVariant }` and nothing else of
 * the evaluation; base and adapter of one arm still share it (the protocol check).
 */
const ARM_EVALUATION_FIELDS: readonly string[] = ["promptVariant"];

/** The evaluation settings an arm's recipe may change, picked from it (nothing else of its evaluation). */
function armEvaluation(recipe: Record<string, unknown>): Record<string, unknown> {
  const ev = recipe.evaluation;
  if (!isPlainObject(ev)) return {};
  return Object.fromEntries(Object.entries(ev).filter(([k]) => ARM_EVALUATION_FIELDS.includes(k)));
}

/** Whether an arm's `evaluation` holds only the per-arm settings. */
const onlyArmEvaluation = (v: unknown): boolean =>
  isPlainObject(v) && Object.keys(v).every((k) => ARM_EVALUATION_FIELDS.includes(k));

const isSharedFactor = (factor: string): boolean =>
  (SHARED_FIELDS as readonly string[]).includes(factor.split(".")[0] ?? "") &&
  !ARM_EVALUATION_FIELDS.some((k) => factor === `evaluation.${k}`);

const Seeds = z
  .array(
    z
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1),
  )
  .min(1)
  .max(16);

export const StudyDefinition = z.strictObject({
  name: z.string().min(1).max(NAME_MAX_LENGTH),
  splitId: z.string().uuid(),
  baseModel: BaseModel,
  /** The evaluation protocol of every arm, its sampling seed (`seed`) and samples per task included. */
  evaluation: EvalProtocol,
  /** Training seeds, the same for every arm (the A/A arm excepted). */
  seeds: Seeds,
  reference: z.strictObject({ name: ArmName.default("reference"), recipe: RecipePart }),
  arms: z
    .array(
      z.strictObject({
        name: ArmName,
        /** The one recipe field (dotted path, e.g. `datasetId`, `method`, `training.learningRate`) this arm changes. */
        factor: z.string().min(1).max(200),
        /** Merged over the reference recipe; only the factor may end up different. */
        recipe: RecipePart,
      }),
    )
    .min(1)
    .max(12),
  /** Primary contrasts, `[treated, control]` by arm name; Holm-adjusted together. */
  contrasts: z
    .array(z.strictObject({ arms: z.tuple([ArmName, ArmName]) }))
    .min(1)
    .max(20),
  /** The empirical null: the reference recipe again under other training seeds. */
  aa: z.strictObject({ name: ArmName.default("A/A"), seeds: Seeds }).optional(),
  /** Refuse arms whose SFT snapshots differ in supervised tokens by more than `tolerance` (relative). */
  tokenMatching: z.strictObject({ tolerance: z.number().min(0).max(0.5).default(BUDGET_TOLERANCE) }).optional(),
  alpha: z.number().gt(0).lt(1).default(0.05),
  /** Assumptions of the power plan: the share of test tasks whose outcome changes between arms, and its within-unit correlation. */
  plan: z
    .strictObject({
      changeRate: z.number().gt(0).max(1).default(0.2),
      withinUnitCorrelation: z.number().min(0).max(1).default(0.3),
    })
    .default({ changeRate: 0.2, withinUnitCorrelation: 0.3 }),
});
export type StudyDefinition = z.infer<typeof StudyDefinition>;
export type StudyDefinitionInput = z.input<typeof StudyDefinition>;

export type ArmRole = "reference" | "arm" | "aa";
/** One arm as it runs: its experiment's whole recipe. */
export type StudyArmPlan = { name: string; role: ArmRole; factor: string | null; config: ExperimentConfig };

export type StudyCheck =
  | { ok: true; definition: StudyDefinition; arms: StudyArmPlan[] }
  | { ok: false; issues: FieldIssues };

function armConfig(
  d: StudyDefinition,
  name: string,
  recipe: Record<string, unknown>,
  seeds: number[],
): ExperimentConfigInput {
  return {
    ...(recipe as Partial<ExperimentConfigInput>),
    name: `${d.name} · ${name}`.slice(0, NAME_MAX_LENGTH),
    splitId: d.splitId,
    baseModel: d.baseModel,
    evaluation: { ...d.evaluation, ...armEvaluation(recipe) },
    seeds,
  } as ExperimentConfigInput;
}

/**
 * The definition checked as a whole: its schema, every arm's recipe (as ExperimentConfig, with
 * the field path under `arms[i].recipe`), exactly one factor differing from the reference per arm
 * (the differing fields named otherwise), unique arm names, contrasts naming arms.
 */
export function checkStudyDefinition(input: unknown): StudyCheck {
  const parsed = StudyDefinition.safeParse(input);
  if (!parsed.success) return { ok: false, issues: issuesByField(parsed.error.issues) };
  const d = parsed.data;
  const issues: FieldIssues = { formErrors: [], fieldErrors: {} };
  const add = (field: string, msg: string) => (issues.fieldErrors[field] ??= []).push(msg);
  const parse = (field: string, c: ExperimentConfigInput) => {
    const r = ExperimentConfig.safeParse(c);
    if (r.success) return r.data;
    for (const [k, msgs] of Object.entries(issuesByField(r.error.issues).fieldErrors))
      for (const m of msgs) add(`${field}.${k}`, m);
    return null;
  };
  const sharedIn = (field: string, recipe: Record<string, unknown>) => {
    for (const k of SHARED_FIELDS) {
      if (!(k in recipe) || (k === "evaluation" && onlyArmEvaluation(recipe[k]))) continue;
      const only = k === "evaluation" ? ` (an arm may set evaluation.${ARM_EVALUATION_FIELDS.join(", ")} only)` : "";
      add(`${field}.${k}`, `${k} is shared by every arm: set it at the study's top level${only}`);
    }
  };
  sharedIn("reference.recipe", d.reference.recipe);
  const reference = parse("reference.recipe", armConfig(d, d.reference.name, d.reference.recipe, d.seeds));
  const arms: StudyArmPlan[] = reference
    ? [{ name: d.reference.name, role: "reference", factor: null, config: reference }]
    : [];
  const names = new Set([d.reference.name]);
  d.arms.forEach((a, i) => {
    const field = `arms.${i}`;
    if (names.has(a.name)) add(`${field}.name`, `arm name "${a.name}" is used twice`);
    names.add(a.name);
    if (isSharedFactor(a.factor)) add(`${field}.factor`, `${a.factor} is shared by every arm and cannot be a factor`);
    sharedIn(`${field}.recipe`, a.recipe);
    const config = parse(`${field}.recipe`, armConfig(d, a.name, mergeRecipe(d.reference.recipe, a.recipe), d.seeds));
    if (!config || !reference) return;
    const { name: _a, ...armRecipe } = config;
    const { name: _r, ...refRecipe } = reference;
    const differing = diffPaths(refRecipe, armRecipe);
    const outside = differing.filter((p) => !factorCovers(a.factor, p));
    if (outside.length)
      add(
        `${field}.recipe.${outside[0]}`,
        `arm "${a.name}" differs from the reference in ${outside.join(", ")}, but its one declared factor is ${a.factor}`,
      );
    else if (differing.length === 0)
      add(`${field}.factor`, `arm "${a.name}" does not differ from the reference in its factor ${a.factor}`);
    else arms.push({ name: a.name, role: "arm", factor: a.factor, config });
  });
  if (d.aa) {
    if (names.has(d.aa.name)) add("aa.name", `arm name "${d.aa.name}" is used twice`);
    names.add(d.aa.name);
    if (d.aa.seeds.length !== d.seeds.length)
      add("aa.seeds", `the A/A arm needs as many seeds as the study (${d.seeds.length})`);
    const shared = d.aa.seeds.filter((s) => d.seeds.includes(s));
    if (shared.length)
      add("aa.seeds", `the A/A arm's seeds must differ from the study's (shared: ${shared.join(", ")})`);
    const config = parse("aa", armConfig(d, d.aa.name, d.reference.recipe, d.aa.seeds));
    if (config) arms.push({ name: d.aa.name, role: "aa", factor: null, config });
  }
  d.contrasts.forEach((c, i) => {
    const [t, ctl] = c.arms;
    for (const [j, n] of [t, ctl].entries()) if (!names.has(n)) add(`contrasts.${i}.arms.${j}`, `no arm named "${n}"`);
    if (t === ctl) add(`contrasts.${i}.arms`, "a contrast compares two different arms");
    if (d.aa && (t === d.aa.name || ctl === d.aa.name))
      add(`contrasts.${i}.arms`, "the A/A arm is the empirical null, reported on its own, never a primary contrast");
  });
  if (Object.keys(issues.fieldErrors).length) return { ok: false, issues };
  return { ok: true, definition: d, arms };
}
