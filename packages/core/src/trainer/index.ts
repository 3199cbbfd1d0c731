export * from "./schemas";
export * from "./inspect";
export * from "./memory";
