// Answers the grader never saw as code: the model's text had no usable code block for the task's
// main files (teacher/answer.ts parseAnswer), so the answer is graded as a failure. A model that
// never learned the answer format fails every task for that reason alone, which reads like "no
// skill" unless the report says so; this section counts them per split and model and names the
// next step.

export type AnswerParsing = {
  split: "dev" | "test";
  modelKey: string;
  /** Answers generated for this split and model (every sample counts). */
  answers: number;
  /** Of those, answers with no usable code block for the task's main files. */
  unparsed: number;
};

/** The one line the report page and the Markdown export print for a split and model. */
export function parsingText(p: AnswerParsing): string {
  if (p.unparsed === 0) return `all ${p.answers} answers parsed`;
  const head = `${p.unparsed} of ${p.answers} answers could not be parsed`;
  if (p.unparsed === p.answers)
    return (
      `${head}: the model never answered in the expected format (one fenced code block per main file, ` +
      "its path on the line above). Next: check the chat template and the prompt template, raise the " +
      "generation's max new tokens if answers stop mid-block, or start from a base that follows the format"
    );
  return `${head} (graded as failures). Next: open the task view's failed answers; raise max new tokens if they stop mid-block`;
}

/** True when some model lost at least one answer to parsing: the check is then shown as a warning. */
export const parsingWarns = (rows: readonly AnswerParsing[]): boolean => rows.some((r) => r.unparsed > 0);
