import type { Server as HttpServer } from "node:http";
import { Server, type Socket } from "socket.io";
import type { z } from "zod";
import {
  AGENT_EVENTS,
  ArtifactMsg,
  ClaimMsg,
  HeartbeatMsg,
  HelloMsg,
  LogMsg,
  ProgressMsg,
  ResultMsg,
  TeacherTurnMsg,
  DomainError,
  checkJobProgress,
  isDomainError,
  receiveJobEnd,
  type ClaimAck,
  type HeartbeatAck,
  type HelloAck,
  type TeacherTurnAck,
  type WriteAck,
} from "@agentlab/core";
import {
  agentByCredential,
  anyJobClaimable,
  agentConnected,
  attachArtifact,
  agentDisconnected,
  agentHeartbeat,
  appendLogs,
  claimJob,
  claimedWithResult,
  finishAndClaim,
  finishAttempt,
  fitOf,
  recordProgress,
  renewLeases,
  type AgentFit,
} from "@agentlab/db";
import type { Services } from "../services";
import { teacherTurns } from "../episodes/teacher-turn";
import { postgresSocketAdapter } from "./adapter";
import { attemptTypes, endRefusedAttempt } from "./receipt";
import { createWaker } from "./wake";

export type AgentGateway = {
  io: Server;
  /** Tells a connected agent it is revoked and drops its socket at once. */
  disconnect(agentId: string): void;
  /** Asks a connected agent to re-run its sandbox self-test (it says hello again with the result). */
  retestSandbox(agentId: string): boolean;
  connectedCount(): number;
  close(): Promise<void>;
};

type AgentSocket = Socket & { data: { agentId: string; fit?: AgentFit; drain?: boolean } };
type Ack = (reply: unknown) => void;

export const MAX_SOCKET_MESSAGE_BYTES = 1024 * 1024;

// Every agent's socket joins its own room, so a cancel or revoke emitted to the room reaches it on
// whichever instance it is connected to (through the cluster adapter when there are several).
const agentRoom = (agentId: string) => `agent:${agentId}`;

// "n jobs were enqueued; wake that many of your idle agents", from one instance to the others.
const WAKE_EVENT = "agentlab:wake";
// A woken agent claims within milliseconds; one that has not after this missed the nudge.
const WAKE_TIMEOUT_MS = 1000;

export function attachAgentGateway(httpServer: HttpServer, services: Services): AgentGateway {
  const { db, env } = services;
  const io = new Server(httpServer, {
    path: "/socket.io",
    serveClient: false,
    maxHttpBufferSize: MAX_SOCKET_MESSAGE_BYTES,
    pingInterval: 10_000,
    pingTimeout: 20_000,
  });
  const cluster = env.DATABASE_URL ? postgresSocketAdapter(env.DATABASE_URL, services.log) : null;
  if (cluster) io.adapter(cluster.adapter);
  const sockets = new Map<string, AgentSocket>();
  const turns = teacherTurns(services);
  const broadcast = () => void io.emit(AGENT_EVENTS.jobsAvailable);
  const waker = createWaker<AgentSocket>({
    emit: (s) => s.emit(AGENT_EVENTS.jobsAvailable),
    broadcast,
    timeoutMs: WAKE_TIMEOUT_MS,
  });
  // A woken agent found nothing (or left): broadcast only when work is still waiting (else it lost a race).
  const missed = () =>
    void anyJobClaimable(db)
      .catch(() => true)
      .then((any) => any && broadcast());

  // Authenticates the socket with the agent credential before any event is accepted.
  io.use(async (socket, next) => {
    const token = (socket.handshake.auth as { token?: unknown }).token;
    // "unauthorized" is final for the agent (it exits), so a database failure must not look like it.
    let agent: Awaited<ReturnType<typeof agentByCredential>>;
    try {
      agent = typeof token === "string" ? await agentByCredential(db, token) : undefined;
    } catch {
      return next(new Error("unavailable"));
    }
    if (!agent) return next(new Error("unauthorized"));
    (socket as AgentSocket).data.agentId = agent.id;
    next();
  });

  io.on("connection", (raw) => {
    const socket = raw as AgentSocket;
    const agentId = socket.data.agentId;
    const log = services.log.child({ agentId });
    sockets.get(agentId)?.disconnect(true); // one live socket per agent
    sockets.set(agentId, socket);
    socket.join(agentRoom(agentId));

    const types = attemptTypes(db);

    // Every request: parse with its zod schema, run, acknowledge. Errors go back in the ack.
    const handle = <S extends z.ZodType, R>(event: string, schema: S, fn: (msg: z.output<S>) => Promise<R>) => {
      socket.on(event, async (payload: unknown, ack: Ack) => {
        if (typeof ack !== "function") return;
        const parsed = schema.safeParse(payload);
        if (!parsed.success)
          return ack({
            ok: false,
            error: {
              code: "BAD_REQUEST",
              message: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
            },
          });
        try {
          ack({ ok: true, data: await fn(parsed.data) });
        } catch (err) {
          log.error({ err, event }, "agent request failed");
          ack({
            ok: false,
            error: isDomainError(err)
              ? { code: err.code, message: err.message }
              : { code: "INTERNAL", message: "internal error" },
          });
        }
      });
    };

    handle(AGENT_EVENTS.hello, HelloMsg, async (msg): Promise<HelloAck> => {
      const agent = await agentConnected(db, agentId, msg.capabilities, msg.drain);
      const caps = msg.capabilities;
      socket.data.drain = msg.drain;
      // The claim matches on the agent's registration as stored (fitOf), not on this report.
      socket.data.fit = agent ? fitOf(agent, caps, env.AGENTLAB_LEASE_TTL_MS) : undefined;
      log.info({ caps: { os: caps.os, gpus: caps.gpus.length, sandbox: caps.sandbox } }, "agent connected");
      return { agentId, heartbeatIntervalMs: env.AGENTLAB_HEARTBEAT_MS, leaseTtlMs: env.AGENTLAB_LEASE_TTL_MS };
    });

    handle(AGENT_EVENTS.claim, ClaimMsg, async (): Promise<ClaimAck> => {
      waker.claiming(socket);
      const fit = socket.data.fit;
      if (!fit || socket.data.drain) {
        waker.busy(socket); // it cannot take work: never a wake target
        return { job: null };
      }
      const job = types.claimed(await claimJob(db, fit));
      // Nothing for it: it now waits for a nudge, and is one of the idle agents an enqueue wakes.
      if (job) waker.busy(socket);
      else if (waker.idle(socket)) missed();
      return { job };
    });

    handle(AGENT_EVENTS.heartbeat, HeartbeatMsg, async (msg): Promise<HeartbeatAck> => {
      socket.data.drain = msg.drain;
      await agentHeartbeat(db, agentId, msg.drain);
      const ids = msg.attempts.map((a) => a.attemptId);
      return {
        ...(await renewLeases(db, agentId, ids, env.AGENTLAB_LEASE_TTL_MS)),
        leaseTtlMs: env.AGENTLAB_LEASE_TTL_MS,
      };
    });

    handle(
      AGENT_EVENTS.log,
      LogMsg,
      async (msg): Promise<WriteAck> => ({
        accepted: await appendLogs(db, agentId, msg.jobId, msg.attemptId, msg.chunks),
      }),
    );
    handle(AGENT_EVENTS.progress, ProgressMsg, async (msg): Promise<WriteAck> => {
      const type = await types.typeOf(msg);
      if (!type) return { accepted: false };
      const checked = checkJobProgress(type, msg.data);
      if (checked.ok)
        return { accepted: await recordProgress(db, agentId, msg.jobId, msg.attemptId, msg.seq, checked.progress) };
      // Refused: the attempt ends, and the ack refuses the write, so the agent stops it, and says why.
      const { out, refused } = await endRefusedAttempt(db, agentId, msg, checked.error);
      log.warn({ jobId: msg.jobId, attemptId: msg.attemptId, refused, state: out.state }, "progress refused");
      if (out.ended) services.queue.events.publish(out.ended);
      if (out.requeued) nudge();
      return { accepted: false, refused };
    });

    handle(AGENT_EVENTS.artifact, ArtifactMsg, async (msg): Promise<WriteAck> => {
      if (!(await services.artifacts.has(msg.sha256)))
        throw new DomainError("PRECONDITION_FAILED", "upload the artifact before attaching it");
      return {
        accepted: await attachArtifact(db, agentId, {
          jobId: msg.jobId,
          attemptId: msg.attemptId,
          name: msg.name,
          kind: msg.kind,
          sha256: msg.sha256,
          meta: msg.meta,
        }),
      };
    });

    // An episode's teacher turn: the key stays here; the attempt and the payload's provider authorize it.
    handle(AGENT_EVENTS.teacherTurn, TeacherTurnMsg, (msg): Promise<TeacherTurnAck> => turns.answer(agentId, msg));

    handle(AGENT_EVENTS.result, ResultMsg, async (reported): Promise<WriteAck> => {
      waker.busy(socket);
      const fit = socket.data.fit;
      // The result is read by its job's contract here, before anything stores it (jobs/receipt.ts).
      const type = await types.typeOf(reported);
      const { refused, ...end } = type ? receiveJobEnd(type, reported) : { ...reported, refused: null };
      const msg = { ...reported, ...end };
      types.forget(msg.attemptId);
      // Finishing and claiming the next job: the common case in one statement (finish-and-claim.ts),
      // anything else in one transaction; one commit per job either way, and one that does not wait
      // for its flush (end-attempt.ts, commitWithoutFlush: why a lost one is harmless).
      const wantsNext = msg.claimNext && fit && !socket.data.drain ? fit : null;
      const fast = wantsNext ? await finishAndClaim(db, msg, agentId, wantsNext) : null;
      const { out, next } =
        fast ??
        (await db.transaction(async (tx) => {
          const out = await finishAttempt(tx, msg, agentId, undefined, { commitWithoutFlush: true });
          const wantsNext = msg.claimNext && out.accepted && fit && !socket.data.drain;
          // A repeated result (its first ack was lost, e.g. to a restart) gets the job its first
          // delivery claimed, not a second one.
          const again = wantsNext && out.repeat ? await claimedWithResult(tx, agentId, msg.attemptId) : null;
          const next = wantsNext ? (again ?? (await claimJob(tx, fit))) : null;
          return { out, next };
        }));
      log.info(
        { jobId: msg.jobId, attemptId: msg.attemptId, reason: msg.reason, accepted: out.accepted, state: out.state },
        "attempt finished",
      );
      if (refused) log.warn({ jobId: msg.jobId, attemptId: msg.attemptId, refused }, "result refused");
      if (out.ended) services.queue.events.publish(out.ended);
      if (out.requeued) nudge();
      return { accepted: out.accepted, next: types.claimed(next), ...(refused ? { refused } : {}) };
    });

    socket.on("disconnect", () => {
      if (waker.gone(socket)) missed();
      if (sockets.get(agentId) !== socket) return;
      sockets.delete(agentId);
      agentDisconnected(db, agentId).catch((err) => log.error({ err }, "marking agent offline failed"));
      log.info("agent disconnected");
    });
  });

  // Without a count (a requeue, the reaper): every agent. With one: that many idle agents here, and
  // the rest asked of the other instances (each wakes up to that many of its own).
  const nudge = (count?: number) => {
    if (count === undefined) return broadcast();
    const woken = waker.wake(count);
    if (woken < count && cluster) io.serverSideEmit(WAKE_EVENT, count - woken);
  };
  if (cluster)
    io.on(WAKE_EVENT, (count: unknown) => {
      if (typeof count === "number" && count > 0) waker.wake(count);
    });
  services.queue.onJobsAvailable(nudge);
  services.queue.onCancel(({ agentId, jobId, attemptId }) =>
    io.to(agentRoom(agentId)).emit(AGENT_EVENTS.cancel, { jobId, attemptId }),
  );

  return {
    io,
    disconnect(agentId) {
      // Across instances the two messages may overtake each other; then the agent's reconnect is
      // refused ("unauthorized"), which is just as final for it.
      io.to(agentRoom(agentId)).emit(AGENT_EVENTS.revoked);
      io.in(agentRoom(agentId)).disconnectSockets(true);
    },
    retestSandbox(agentId) {
      const s = sockets.get(agentId);
      s?.emit(AGENT_EVENTS.selftest);
      return s !== undefined;
    },
    connectedCount: () => sockets.size,
    async close() {
      waker.close();
      await new Promise<void>((resolve) => io.close(() => resolve()));
      await cluster?.close();
    },
  };
}
