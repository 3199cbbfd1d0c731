import { GRADER_VERSION, type StudyDefinitionInput } from "@agentlab/core";
import type { FieldIssues } from "@agentlab/core/validation";

// The study creation form's fields as strings (what inputs hold) and their translation into the
// study definition a study file holds (core StudyDefinition, the schema `agentlab studies create`
// checks); kept pure so it is unit-tested without a browser. An arm is one factor and its value:
// `training.learningRate` = `1e-3` becomes the recipe part `{ training: { learningRate: 0.001 } }`.

export type ArmForm = {
  name: string;
  /** The recipe field (dotted path) the arm changes. */
  factor: string;
  /** Its value: JSON where it parses as JSON (numbers, booleans, objects), else the text itself. */
  value: string;
  /** Declared as a primary contrast against the reference (Holm-adjusted with the others). */
  primary: boolean;
};

export type StudyForm = {
  name: string;
  splitId: string;
  baseModel: string;
  graderVersion: string;
  seeds: string;
  referenceName: string;
  providerId: string;
  /** A measured SFT snapshot of the split; empty: the arms collect with the teacher. */
  datasetId: string;
  /** Further reference recipe fields, as a JSON object (e.g. `{"training": {"epochs": 2}}`). */
  referenceExtra: string;
  arms: ArmForm[];
  /** Training seeds of the optional A/A arm (the reference again); empty: no A/A arm. */
  aaSeeds: string;
  tokenMatching: boolean;
  /** Allowed supervised-token gap to the reference, in percent. */
  tolerancePct: string;
  alpha: string;
};

export const emptyArm = (i: number): ArmForm => ({ name: `arm-${i + 1}`, factor: "", value: "", primary: true });

export const defaultStudyForm: StudyForm = {
  name: "",
  splitId: "",
  baseModel: "",
  graderVersion: GRADER_VERSION,
  seeds: "1, 2, 3",
  referenceName: "reference",
  providerId: "",
  datasetId: "",
  referenceExtra: "{}",
  arms: [emptyArm(0)],
  aaSeeds: "",
  tokenMatching: false,
  tolerancePct: "0.5",
  alpha: "0.05",
};

/** A number where the text is one; the text otherwise, so the schema names the field and what it expected. */
const num = (text: string): number | string => {
  const t = text.trim();
  return t !== "" && Number.isFinite(Number(t)) ? Number(t) : t;
};

export const seedList = (text: string): (number | string)[] =>
  text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(num);

export function parseValue(text: string): unknown {
  const t = text.trim();
  try {
    return JSON.parse(t);
  } catch {
    return t;
  }
}

/** `{ a: { b: value } }` for the path `a.b`. */
export function atPath(path: string, value: unknown): Record<string, unknown> {
  const keys = path.split(".").filter(Boolean);
  let out: unknown = value;
  for (const k of keys.reverse()) out = { [k]: out };
  return typeof out === "object" && out !== null && !Array.isArray(out) ? (out as Record<string, unknown>) : {};
}

const baseModel = (ref: string) => ({
  source: ref.startsWith("/") || ref.startsWith(".") ? ("path" as const) : ("hub" as const),
  ref,
});

/**
 * The definition the form describes, or the fields the form itself cannot read (the reference's
 * extra recipe not being a JSON object); everything else is left to the study schema's check.
 */
export function toDefinition(f: StudyForm): { definition: StudyDefinitionInput } | { issues: FieldIssues } {
  let extra: unknown;
  try {
    extra = JSON.parse(f.referenceExtra.trim() || "{}");
  } catch (err) {
    extra = err instanceof Error ? err.message : "not JSON";
  }
  if (typeof extra !== "object" || extra === null || Array.isArray(extra))
    return {
      issues: {
        formErrors: [],
        fieldErrors: { "reference.recipe": [`a JSON object of recipe fields (${String(extra)})`] },
      },
    };
  const recipe: Record<string, unknown> = {
    ...(extra as Record<string, unknown>),
    ...(f.providerId ? { teacher: { providerId: f.providerId } } : {}),
    ...(f.datasetId ? { datasetId: f.datasetId } : {}),
  };
  const refName = f.referenceName.trim() || "reference";
  const aa = seedList(f.aaSeeds);
  const definition = {
    name: f.name.trim(),
    splitId: f.splitId,
    baseModel: baseModel(f.baseModel.trim()),
    evaluation: { graderVersion: f.graderVersion.trim() },
    seeds: seedList(f.seeds),
    reference: { name: refName, recipe },
    arms: f.arms.map((a) => ({
      name: a.name.trim(),
      factor: a.factor.trim(),
      recipe: atPath(a.factor.trim(), parseValue(a.value)),
    })),
    contrasts: f.arms.filter((a) => a.primary).map((a) => ({ arms: [a.name.trim(), refName] })),
    ...(aa.length ? { aa: { seeds: aa } } : {}),
    ...(f.tokenMatching ? { tokenMatching: { tolerance: Number(num(f.tolerancePct)) / 100 } } : {}),
    alpha: num(f.alpha),
  };
  // The schema judges every field; the form only moved strings into the definition's shape.
  return { definition: definition as StudyDefinitionInput };
}

/**
 * An error carrying field issues the way the server's refusals carry them (the zod issue list as
 * its message), so the form's ErrorBox and field errors show a local refusal exactly like a remote one.
 */
export class FieldIssuesError extends Error {
  constructor(issues: FieldIssues) {
    super(
      JSON.stringify([
        ...issues.formErrors.map((message) => ({ path: [], message })),
        ...Object.entries(issues.fieldErrors).flatMap(([field, msgs]) =>
          msgs.map((message) => ({ path: field.split("."), message })),
        ),
      ]),
    );
    this.name = "FieldIssuesError";
  }
}
