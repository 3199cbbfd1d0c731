export * from "./schemas";
export * from "./verdict";
