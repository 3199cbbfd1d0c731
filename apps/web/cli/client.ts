import { createTRPCClient, httpLink } from "@trpc/client";
import { ImportResponse } from "@agentlab/core";
import type { AppRouter } from "../server/routers";
import { namedFetch } from "../client/errors";

export type ApiClient = {
  server: string;
  trpc: ReturnType<typeof createTRPCClient<AppRouter>>;
  /** Streams a task file to the import endpoint; `onProgress` gets bytes sent so far. */
  importTasks(opts: {
    pool: string;
    body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
    description?: string;
    onProgress?: (sent: number) => void;
  }): Promise<ImportResponse>;
};

export function createApiClient(server: string, token: string): ApiClient {
  const base = server.replace(/\/+$/, "");
  const headers = { authorization: `Bearer ${token}` };
  const trpc = createTRPCClient<AppRouter>({
    links: [httpLink({ url: `${base}/api/trpc`, headers, fetch: namedFetch })],
  });
  return {
    server: base,
    trpc,
    async importTasks({ pool, body, description, onProgress }) {
      const url = new URL(`${base}/api/tasks/import`);
      url.searchParams.set("pool", pool);
      if (description) url.searchParams.set("description", description);
      let sent = 0;
      const it = (async function* () {
        yield* body;
      })();
      const stream = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await it.next();
          if (done) return controller.close();
          sent += value.length;
          onProgress?.(sent);
          controller.enqueue(value);
        },
      });
      const res = await namedFetch(url, {
        method: "POST",
        headers: { ...headers, "content-type": "application/octet-stream" },
        body: stream,
        duplex: "half",
      } as RequestInit & { duplex: "half" });
      const json: unknown = await res.json().catch(() => null);
      const parsed = ImportResponse.safeParse(json);
      if (parsed.success) return parsed.data;
      const msg = (json as { error?: { message?: string } } | null)?.error?.message ?? `HTTP ${res.status}`;
      throw new Error(`import failed: ${msg}`);
    },
  };
}
