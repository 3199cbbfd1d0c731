export * from "./client";
export * as schema from "./schema";
export * from "./schema";
export * from "./tokens";
export * from "./queries/jobs";
export * from "./queries/agents";
export * from "./queries/auth";
export * from "./queries/tasks";
export * from "./queries/splits";
