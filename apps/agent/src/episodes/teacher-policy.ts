import {
  AGENT_EVENTS,
  TeacherTurnAck,
  callFromReply,
  teacherMessages,
  teacherPolicyHash,
  type TeacherPolicySpec,
  type TeacherTurnMsg,
} from "@agentlab/core";
import { RequestRefused } from "../link";
import type { JobContext } from "../jobs/types";
import { EpisodeInfraError } from "./deps";
import type { EpisodePolicy } from "./policies";

// A teacher with native tool calls, asked through the server: the agent never holds the
// provider's key. Each turn sends the transcript as chat messages (core teacherMessages, a pure
// function of the transcript, so a continuation from a stored state asks with the same history)
// and maps the reply's first tool call back to a call the environment executes and refuses as
// it would any policy's. The budget stays the environment's; the teacher's cost cap is the server's.

export type AskTurn = (turn: Omit<TeacherTurnMsg, "version" | "jobId" | "attemptId">) => Promise<TeacherTurnAck>;

/** How long one try of a turn waits for its ack: the provider's timeout over all its retries. A resend joins the call in flight. */
const ackTimeoutMs = (spec: TeacherPolicySpec) =>
  Math.min(spec.timeoutMs * (spec.maxRetries + 1) + 30_000, 20 * 60_000);

/** The turn request over the job's own channel to the server (fenced by its attempt). */
export function askThroughServer(ask: NonNullable<JobContext["ask"]>, spec: TeacherPolicySpec): AskTurn {
  return (turn) => ask(AGENT_EVENTS.teacherTurn, turn, TeacherTurnAck, ackTimeoutMs(spec));
}

export function teacherPolicy(spec: TeacherPolicySpec, ask: AskTurn): EpisodePolicy {
  return {
    name: `teacher:${spec.model}`,
    hash: teacherPolicyHash(spec),
    async next(view) {
      let ack: TeacherTurnAck;
      try {
        ack = await ask({
          providerId: spec.providerId,
          seed: view.seed,
          messages: teacherMessages(view.firstObservation, view.transcript),
        });
      } catch (e) {
        if (e instanceof RequestRefused)
          throw new EpisodeInfraError(`the server refused a teacher turn (${e.code}): ${e.message}`, "infra_error");
        throw e;
      }
      // A spent budget or an unusable provider will not change on a retry; a failed call may.
      if (ack.outcome === "stopped")
        throw new EpisodeInfraError(
          `the teacher stopped (${ack.reason}): ${ack.message}`,
          ack.reason === "provider_failed" ? "infra_error" : "user_error",
        );
      return callFromReply(ack.reply);
    },
  };
}
