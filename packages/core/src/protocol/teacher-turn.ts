import { z } from "zod";
import { TeacherMessage, TeacherReply } from "../episodes/teacher";
import { Usage } from "../teacher/schemas";
import { AttemptRef, PROTOCOL_VERSION } from "./messages";

// Agent → server: the next turn of a teacher policy in an episode job the agent holds. The key
// never leaves the server: the agent sends the history and gets the assistant's reply. Fenced like
// every write (jobId, attemptId: the holder's current attempt), and the provider named must be the
// one in the job's payload; the server refuses anything else.

/** Enough for a history of a few hundred turns; the server's own cap is the job's context budget. */
export const TEACHER_TURN_MAX_MESSAGES = 1200;

export const TeacherTurnMsg = AttemptRef.extend({
  version: z.literal(PROTOCOL_VERSION),
  providerId: z.string().uuid(),
  /** The episode's sampling seed (a continuation's own). */
  seed: z.number().int().min(0),
  messages: z.array(TeacherMessage).min(2).max(TEACHER_TURN_MAX_MESSAGES),
});
export type TeacherTurnMsg = z.infer<typeof TeacherTurnMsg>;

/**
 * The turn, or why the teacher will answer no more in this job: its budget is spent (`budget`), its
 * provider cannot be used (`provider_unusable`: gone, no base URL) or failed after its retries
 * (`provider_failed`). A refused request (not the holder, another provider, a malformed history)
 * is an error ack instead. `cached`: answered before (a resent request, a retried attempt), free now.
 */
export const TeacherTurnAck = z.discriminatedUnion("outcome", [
  z.strictObject({ outcome: z.literal("reply"), reply: TeacherReply, usage: Usage, cached: z.boolean() }),
  z.strictObject({
    outcome: z.literal("stopped"),
    reason: z.enum(["budget", "provider_unusable", "provider_failed"]),
    message: z.string().max(4000),
  }),
]);
export type TeacherTurnAck = z.infer<typeof TeacherTurnAck>;
