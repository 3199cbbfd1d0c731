import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_EVENTS, PROTOCOL_VERSION } from "@agentlab/core";
import { createEnrollmentToken, enrollAgent } from "@agentlab/db";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { startTestApp, trpcHttp, type TestApp } from "./auth-helpers";
import { connectAgent, hello, request, waitFor } from "./security-agent-helpers";
import { MAX_SOCKET_MESSAGE_BYTES } from "../../apps/web/server/agents/gateway";

// Oversized and malformed input is refused with a clear 4xx (or a closed socket), and the server
// keeps serving everyone else afterwards.
let t: TestDb;
let s: TestApp;
let credential: string;
const MAX_BODY = 64 * 1024;
const MAX_UPLOAD = 16 * 1024;
beforeAll(async () => {
  t = await createTestDatabase();
  s = await startTestApp(t, {
    AGENTLAB_MAX_BODY_BYTES: String(MAX_BODY),
    AGENTLAB_MAX_UPLOAD_BYTES: String(MAX_UPLOAD),
  });
  ({ credential } = await enrollAgent(t.db, (await createEnrollmentToken(t.db, { name: "limits", ttlS: 60 })).token));
});
afterAll(async () => {
  await s?.close();
  await t?.drop();
});

const healthy = async () => (await fetch(`${s.url}/api/health`)).status;
const code = (r: { body: unknown }) => (r.body as { error?: { data?: { code?: string } } }).error?.data?.code;

describe("HTTP requests", () => {
  it("refuses a body over the limit with 413", async () => {
    const r = await trpcHttp(s.url, "auth.login", {
      rawBody: JSON.stringify({ email: "a@b.c", password: "x".repeat(MAX_BODY * 2) }),
    });
    expect(r.status).toBe(413);
    expect(await healthy()).toBe(200);
  });

  it("refuses malformed JSON, wrong types, and wrong content types with 4xx", async () => {
    const bad = await trpcHttp(s.url, "auth.login", { rawBody: '{"email": "a@b.c", "password": ' });
    expect(bad.status).toBe(400);
    const types = await trpcHttp(s.url, "auth.login", { input: { email: 42, password: ["x"] } });
    expect(types.status).toBe(400);
    expect(code(types)).toBe("BAD_REQUEST");
    expect(
      (types.body as { error: { data: { zodError: { fieldErrors: object } } } }).error.data.zodError.fieldErrors,
    ).toHaveProperty("email");
    const longPassword = await trpcHttp(s.url, "auth.login", {
      input: { email: "a@b.c", password: "x".repeat(10_000) },
    });
    expect(longPassword.status).toBe(400); // zod caps the password before any hashing
    const text = await fetch(`${s.url}/api/trpc/auth.login`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "{}",
    });
    expect(text.status).toBe(415);
    // A cross-site HTML form can post multipart without a preflight; the input schema refuses it.
    const form = new FormData();
    form.set("email", "a@b.c");
    form.set("password", "whatever password");
    const multipart = await fetch(`${s.url}/api/trpc/auth.login`, { method: "POST", body: form });
    expect(multipart.status).toBe(400);
    expect(await healthy()).toBe(200);
  });

  it("treats a malformed cookie as no cookie, not a server error", async () => {
    const r = await trpcHttp(s.url, "auth.me", { headers: { cookie: "agentlab_session=%E0%A4%A" } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ result: { data: null } });
  });

  it("refuses an artifact upload over the limit and keeps serving", async () => {
    const sha = "cd".repeat(32);
    const r = await fetch(`${s.url}/api/artifacts/${sha}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${credential}`, "upload-offset": "0" },
      body: Buffer.alloc(MAX_UPLOAD * 8, 1),
    }).then(
      (res) => res.status,
      () => "connection closed",
    );
    expect([413, "connection closed"]).toContain(r);
    expect(await healthy()).toBe(200);
  });
});

describe("socket messages", () => {
  it("answers malformed requests with BAD_REQUEST and ignores junk without an ack", async () => {
    const sock = await connectAgent(s.url, credential);
    try {
      expect(await request(sock, AGENT_EVENTS.hello, { version: 2, capabilities: {} })).toMatchObject({
        ok: false,
        error: { code: "BAD_REQUEST" },
      });
      for (const junk of [
        null,
        "hello",
        42,
        [],
        { version: PROTOCOL_VERSION, jobId: "../../etc", attemptId: 1, chunks: [] },
      ]) {
        expect(await request(sock, AGENT_EVENTS.log, junk)).toMatchObject({
          ok: false,
          error: { code: "BAD_REQUEST" },
        });
      }
      const tooManyChunks = {
        version: PROTOCOL_VERSION,
        jobId: crypto.randomUUID(),
        attemptId: crypto.randomUUID(),
        chunks: Array.from({ length: 300 }, (_, seq) => ({ seq, stream: "stdout", data: "x" })),
      };
      expect(await request(sock, AGENT_EVENTS.log, tooManyChunks)).toMatchObject({
        ok: false,
        error: { code: "BAD_REQUEST" },
      });
      sock.emit(AGENT_EVENTS.log, { junk: true }); // no ack callback
      sock.emit("no-such-event", { x: 1 }, () => {});
      expect(await hello(sock)).toMatchObject({ ok: true }); // the same socket still works
    } finally {
      sock.close();
    }
  });

  it("drops a socket that sends a message over the size limit, and others carry on", async () => {
    const big = await connectAgent(s.url, credential);
    const dropped = waitFor<string>(big, "disconnect");
    big.emit(AGENT_EVENTS.log, { version: PROTOCOL_VERSION, blob: "x".repeat(MAX_SOCKET_MESSAGE_BYTES + 1024) });
    expect(await dropped).toMatch(/transport (close|error)/);
    const next = await connectAgent(s.url, credential);
    try {
      expect(await hello(next)).toMatchObject({ ok: true });
    } finally {
      next.close();
    }
    expect(await healthy()).toBe(200);
  });

  it("drops a socket that sends an undecodable packet, and others carry on", async () => {
    const raw = await connectAgent(s.url, credential);
    const dropped = waitFor<string>(raw, "disconnect");
    // Below socket.io's framing: an engine.io message that is no valid socket.io packet.
    (raw.io.engine as unknown as { write(data: string): void }).write("9{not a packet");
    expect(await dropped).toMatch(/transport close|io server disconnect|parse error/);
    const next = await connectAgent(s.url, credential);
    next.close();
    expect(await healthy()).toBe(200);
  });
});
