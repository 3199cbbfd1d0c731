import type { Db } from "@agentlab/db";
import type { Env } from "./env";
import type { Logger } from "./logger";
import type { ArtifactStore } from "./artifacts/store";
import type { SecretBox } from "./auth/secret-box";
import type { Queue } from "./queue";

// What request handlers, socket handlers and background loops share. Built once in app.ts.
export type Services = {
  env: Env;
  db: Db;
  log: Logger;
  queue: Queue;
  artifacts: ArtifactStore;
  secrets: SecretBox;
  /** Live agent sockets; bound to the socket.io gateway once it is attached. */
  agentHub: AgentHub;
};

export type AgentHub = {
  disconnect(agentId: string): void;
  /** Asks a connected agent to re-run its sandbox self-test; false when it is not connected. Absent without a gateway (tests, benches). */
  retestSandbox?(agentId: string): boolean;
};
