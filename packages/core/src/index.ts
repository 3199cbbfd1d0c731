export * from "./errors";
export * from "./hash";
export * from "./tasks";
export * from "./jobs/schemas";
export * from "./protocol/capabilities";
export * from "./protocol/messages";
export * from "./grading";
export * from "./teacher";
