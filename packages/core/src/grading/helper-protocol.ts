import { z } from "zod";

// The small Python helpers' answers the agent reads (Node ↔ Python, besides the grading requests
// of runner-protocol.ts and the trainer's specs): each is parsed with its schema where it arrives.

/** The grading zygote's first line (apps/agent/grader/runner.py): it is up and forked its candidate zygote. */
export const RunnerReady = z.object({
  ready: z.literal(true),
  pid: z.number().int(),
  caps: z.unknown().optional(),
  protocol: z.number().int(),
});
export type RunnerReady = z.infer<typeof RunnerReady>;

export const Mutant = z.object({
  operator: z.string(),
  line: z.number().int(),
  description: z.string(),
  source: z.string(),
});
export type Mutant = z.infer<typeof Mutant>;

/** apps/agent/grader/mutate.py's answer: the normalized source and its mutants, or an error. */
export const MutateAnswer = z.object({
  normalized: z.string().optional(),
  mutants: z.array(Mutant).optional(),
  error: z.string().optional(),
});
export type MutateAnswer = z.infer<typeof MutateAnswer>;

/** apps/agent/grader/cross_file.py's answer line for one task: the dependency symbols its reference reads. */
export const CrossFileAnswer = z.object({
  id: z.string(),
  group: z.string(),
  uses: z.array(z.string()),
});
export type CrossFileAnswer = z.infer<typeof CrossFileAnswer>;
