import type { JobType, TerminalReason } from "./schemas";
import { checkJobResult } from "./contracts";

// What the server stores of an agent's result, decided where it receives it (the agent gateway):
// the job contract is enforced at the wire, so `jobs.result` of a succeeded job always fits its
// type and a broken agent cannot plant a malformed "success" for the stages to trip over later.

export type ReportedEnd = { reason: TerminalReason; result: Record<string, unknown>; error: string | null };
/** `refused`: why the reported success was refused (told to the agent); null when it was taken as reported. */
export type ReceivedEnd = ReportedEnd & { refused: string | null };

/** The reason a refused write is stored and told under; the contract's message names the type and field. */
export const refusal = (contractError: string): string =>
  `refused at receipt: the agent's ${contractError}`.slice(0, 4000);

/**
 * A success whose result breaks its type's contract becomes the attempt's infra_error (the agent's
 * fault, retried like one), its result dropped and the reason naming the job type and the field.
 * A success that fits is stored as parsed (defaults filled). A failure's result is evidence of the
 * failure (a grade's failed reference, an interrupted batch's graded items), kept as reported: only
 * a success's result is read as the type's output.
 */
export function receiveJobEnd(type: JobType, end: ReportedEnd): ReceivedEnd {
  if (end.reason !== "succeeded") return { ...end, refused: null };
  const checked = checkJobResult(type, end.result);
  if (checked.ok) return { ...end, result: checked.result, refused: null };
  const refused = refusal(checked.error);
  return { reason: "infra_error", result: {}, error: refused, refused };
}
