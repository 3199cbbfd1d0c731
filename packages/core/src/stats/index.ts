export * from "./passk";
export * from "./mcnemar";
export * from "./random";
export * from "./bootstrap";
export * from "./pooling";
