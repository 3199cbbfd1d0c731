export * from "./python";
