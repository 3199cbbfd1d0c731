import { describe, expect, it } from "vitest";
import { TRPCClientError } from "@trpc/client";
import { z } from "zod";
import { HttpStatusError, NetworkError, describeError, fieldError, namedFetch } from "./errors";

const zodIssues = () => {
  const r = z
    .object({ name: z.string().max(3), training: z.object({ epochs: z.number().max(50) }) })
    .safeParse({ name: "long", training: { epochs: 99 } });
  if (r.success) throw new Error("expected a failure");
  return r.error.issues;
};

describe("describeError", () => {
  it("turns tRPC's serialized issue list into field messages, never raw JSON", () => {
    const err = new TRPCClientError(JSON.stringify(zodIssues(), null, 2));
    const d = describeError(err);
    expect(d.message).not.toContain("[");
    expect(d.message).toContain("name: ");
    expect(d.fields["training.epochs"]?.[0]).toMatch(/50/);
    expect(fieldError(err, "training")).toMatch(/^epochs: /);
    expect(fieldError(err, "seeds")).toBeNull();
  });

  it("reads the server's field errors (dotted paths) from the error data", () => {
    const err = new TRPCClientError("name: required", {
      result: {
        error: {
          code: -32600,
          message: "name: required",
          data: {
            code: "BAD_REQUEST",
            httpStatus: 400,
            zodError: { formErrors: [], fieldErrors: { "baseModel.ref": ["required"] } },
          },
        },
      },
    });
    const d = describeError(err);
    expect(d.code).toBe("BAD_REQUEST");
    expect(fieldError(err, "baseModel.ref")).toBe("required");
  });

  it("names HTTP statuses and network failures carried as the cause", () => {
    expect(describeError(TRPCClientError.from(new HttpStatusError(431))).message).toMatch(/431.*headers are too large/);
    expect(describeError(TRPCClientError.from(new HttpStatusError(413))).message).toMatch(/413.*too large/);
    expect(describeError(TRPCClientError.from(new HttpStatusError(429))).message).toMatch(/429.*too many requests/);
    expect(describeError(TRPCClientError.from(new HttpStatusError(502))).message).toMatch(/502.*unavailable/);
    const net = describeError(TRPCClientError.from(new NetworkError("http://127.0.0.1:9")));
    expect(net.code).toBe("NETWORK");
    expect(net.message).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9/);
  });

  it("keeps a plain message as it is", () => {
    expect(describeError(new Error("split is frozen")).message).toBe("split is frozen");
  });
});

describe("namedFetch", () => {
  it("reports an unreachable server as a NetworkError naming it", async () => {
    // Port 9 (discard) on loopback refuses connections: a real failed fetch, no mock.
    await expect(namedFetch("http://127.0.0.1:9/api/trpc")).rejects.toBeInstanceOf(NetworkError);
  });
});
