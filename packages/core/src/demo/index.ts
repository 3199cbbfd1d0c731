export * from "./cpu-demo";
export * from "./echo-warmup";
