import { z } from "zod";
import { CandidateFile, GradeLimits, GradingIsolation } from "../grading/schemas";
import { TaskSpec } from "../tasks/spec";
import { EpisodeBudget, EpisodeRun, EpisodeState, SnapshotManifest, StateValue } from "./schemas";
import { LocalPolicySpec } from "./local";
import { TeacherPolicySpec } from "./teacher";

// The `episode` job: one episode of a policy on a task, then K continuations from each of its
// branch points (t = 0 and after every failed run_public_tests), each to the judge's verdict.

const Sha256 = z.string().regex(/^[a-f0-9]{64}$/, "a sha256 hex digest");

/**
 * The scripted policies are positive controls, not models: `solver` reads, runs the tests and
 * applies the reference; `recoverer` applies a wrong edit, runs the tests, then applies the
 * reference; `wrong` edits without fixing and submits; `coin` flips a seeded coin between the two
 * (its continuations' pass rate is a value estimate strictly inside [0, 1] on average).
 */
export const SCRIPTED_POLICIES = ["solver", "recoverer", "wrong", "coin"] as const;
export const ScriptedPolicyName = z.enum(SCRIPTED_POLICIES);
export type ScriptedPolicyName = z.infer<typeof ScriptedPolicyName>;
/** The policies that need the task's reference (given as controlReference). */
export const REFERENCE_POLICIES: readonly ScriptedPolicyName[] = ["solver", "recoverer", "coin"];

const ScriptedPolicySpec = z.strictObject({ kind: z.literal("scripted"), name: ScriptedPolicyName });

/**
 * A job's policy: a scripted control, a teacher asked through the server (episodes/teacher.ts), or
 * a local model on the agent (episodes/local.ts).
 */
export const EpisodePolicySpec = z.discriminatedUnion("kind", [ScriptedPolicySpec, TeacherPolicySpec, LocalPolicySpec]);
export type EpisodePolicySpec = z.infer<typeof EpisodePolicySpec>;

/** What a user asks for: a teacher's model defaults to its provider's (the server fills it in the payload). */
export const EpisodePolicyRequest = z.discriminatedUnion("kind", [
  ScriptedPolicySpec,
  TeacherPolicySpec.extend({ model: TeacherPolicySpec.shape.model.optional() }),
  LocalPolicySpec,
]);
export type EpisodePolicyRequest = z.input<typeof EpisodePolicyRequest>;

export const EpisodeBranching = z.strictObject({
  /** Continuations per branch point; 0 runs the main episode only. */
  k: z.number().int().min(0).max(32).default(0),
  /** A continuation's seed is seedBase + its index (distinct from the main episode's seed by construction). */
  seedBase: z.number().int().min(0).default(1000),
});
export type EpisodeBranching = z.infer<typeof EpisodeBranching>;

export const EpisodeJobPayload = z
  .strictObject({
    task: TaskSpec,
    /** The control plane's key for storing the result; the agent does not read it. */
    taskRowId: z.string().uuid().optional(),
    policy: EpisodePolicySpec,
    seed: z.number().int().min(0),
    budget: EpisodeBudget.default(EpisodeBudget.parse({})),
    branching: EpisodeBranching.default({ k: 0, seedBase: 1000 }),
    /**
     * The task's reference, handed to a scripted control policy and to nothing else: the server
     * fills it only for those controls. The workspace never holds it; the judge takes its own copy
     * from `task`.
     */
    controlReference: z.array(CandidateFile).min(1).optional(),
    limits: GradeLimits.partial().default({}),
    isolation: GradingIsolation.default("judge"),
    expectedTestIds: z.array(z.string()).optional(),
  })
  .superRefine((p, ctx) => {
    if (p.policy.kind === "local" && p.policy.adapterSha256 && !p.policy.adapterArtifact)
      ctx.addIssue({
        code: "custom",
        path: ["policy", "adapterArtifact"],
        message:
          "an adapter's hash names the snapshot to check; its archive (adapterArtifact) is what the agent fetches",
      });
    const needs = p.policy.kind === "scripted" && REFERENCE_POLICIES.includes(p.policy.name);
    if (needs && !p.controlReference)
      ctx.addIssue({
        code: "custom",
        path: ["controlReference"],
        message: "a scripted control that applies the reference needs controlReference",
      });
    if (!needs && p.controlReference)
      ctx.addIssue({
        code: "custom",
        path: ["controlReference"],
        message: "controlReference is for the scripted control policies that apply the reference only",
      });
  });
export type EpisodeJobPayload = z.input<typeof EpisodeJobPayload>;

export const EpisodeBranch = z.strictObject({ index: z.number().int().min(0), run: EpisodeRun });
export type EpisodeBranch = z.infer<typeof EpisodeBranch>;

export const EpisodeJobResult = z.strictObject({
  policy: z.strictObject({ name: z.string(), hash: Sha256 }),
  episode: EpisodeRun,
  branches: z.array(EpisodeBranch),
  states: z.array(EpisodeState),
  values: z.array(StateValue),
  /** Tree hash → manifest, and file hash → content: every workspace the result names, content-addressed. */
  snapshots: z.record(Sha256, SnapshotManifest),
  blobs: z.record(Sha256, z.string()),
});
export type EpisodeJobResult = z.infer<typeof EpisodeJobResult>;
