import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { markAllAgentsOffline, type Db } from "@agentlab/db";
import type { Env } from "./env";
import type { Logger } from "./logger";
import { createContext } from "./trpc/context";
import { appRouter } from "./routers";
import { attachAgentGateway, type AgentGateway } from "./agents/gateway";
import { artifactStoreFromEnv } from "./artifacts/from-env";
import { startUploadSweep } from "./artifacts/sweep";
import { handleArtifacts } from "./http/artifacts";
import { handleTaskImport } from "./http/import";
import { health } from "./http/health";
import { handleEnroll } from "./http/enroll";
import { handleWhoami } from "./agents/whoami";
import { sendError } from "./http/respond";
import { setSecurityHeaders } from "./http/headers";
import { createQueue } from "./queue";
import { createSecretBox } from "./auth/secret-box";
import { startBackground, type Background } from "./background";
import { startLeadership } from "./events/leadership";
import type { TryLead } from "@agentlab/db";
import type { Listen } from "./events/bus";
import type { Services } from "./services";

export type NextHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

export type App = {
  server: Server;
  services: Services;
  gateway: AgentGateway;
  /** The background loops, on the instance that leads them (null on the others). */
  readonly background: Background | null;
  listen(port: number, host?: string): Promise<number>;
  close(): Promise<void>;
};

export type AppOptions = {
  env: Env;
  db: Db;
  log: Logger;
  secret: string;
  next?: NextHandler;
  /** LISTEN on the database (Database.listen): the queue's events from every instance. */
  listen?: Listen;
  /** Leadership across instances (Database.tryLead); without it this instance always leads. */
  tryLead?: TryLead;
};

/** One Node process: tRPC and plain HTTP routes, the agents' socket.io endpoint, and Next for pages. */
export async function createApp(opts: AppOptions): Promise<App> {
  const { env, db, log } = opts;
  await markAllAgentsOffline(db);
  const services: Services = {
    env,
    db,
    log,
    queue: createQueue(db, log),
    artifacts: artifactStoreFromEnv(env),
    secrets: createSecretBox(opts.secret),
    agentHub: { disconnect: () => {} },
  };
  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: "/api/trpc/",
    maxBodySize: env.AGENTLAB_MAX_BODY_BYTES,
    createContext: ({ req, res }) => createContext(services, req, res),
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR")
        log.error({ err: error.cause ?? error, path }, "tRPC procedure failed");
    },
  });

  const server = createServer((req, res) => {
    const url = req.url ?? "/";
    setSecurityHeaders(req, res, { dev: env.NODE_ENV === "development" });
    const route = async () => {
      if (url.startsWith("/api/trpc/")) return trpc(req, res);
      if (url === "/api/health" || url.startsWith("/api/health?")) return health(services, res);
      if (url.startsWith("/api/artifacts/")) return handleArtifacts(services, req, res);
      if (url === "/api/tasks/import" || url.startsWith("/api/tasks/import?"))
        return handleTaskImport(services, req, res);
      if (url === "/api/agents/enroll") return handleEnroll(services, req, res);
      if (url === "/api/agents/me") return handleWhoami(services, req, res);
      if (opts.next) return opts.next(req, res);
      res.writeHead(404).end("not found");
    };
    route().catch((err) => {
      log.error({ err, url }, "request failed");
      if (!res.headersSent) sendError(res, err);
      else res.destroy();
    });
  });
  const gateway = attachAgentGateway(server, services);
  services.agentHub.disconnect = gateway.disconnect;
  services.agentHub.retestSandbox = gateway.retestSandbox;
  let background: Background | null = null;
  const lead = async () => {
    const b = await startBackground(services, { listen: opts.listen });
    background = b;
    return async () => {
      background = null;
      await b.stop();
    };
  };
  const stopBackground = opts.tryLead
    ? (() => {
        const l = startLeadership({ tryLead: opts.tryLead, lead, retryMs: env.AGENTLAB_LEADER_RETRY_MS, log });
        return () => l.stop();
      })()
    : await lead();
  server.once("close", () => void stopBackground());
  server.once("close", startUploadSweep(services));

  return {
    server,
    services,
    gateway,
    get background() {
      return background;
    },
    listen: (port, host = "127.0.0.1") =>
      new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          const addr = server.address();
          resolve(typeof addr === "object" && addr ? addr.port : port);
        });
      }),
    async close() {
      await stopBackground();
      await gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
