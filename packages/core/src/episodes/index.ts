export * from "./schemas";
export * from "./job";
export * from "./hashing";
export * from "./trajectory-sft";
export * from "./report-agentic";
export * from "./teacher";
export * from "./local";
