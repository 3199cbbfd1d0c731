export * from "./schemas";
export * from "./dpo";
export * from "./inspect";
export * from "./memory";
