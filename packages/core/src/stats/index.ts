export * from "./mcnemar";
export * from "./random";
export * from "./distributions";
export * from "./clusters";
export * from "./signflip";
export * from "./bootstrap";
export * from "./compare";
export * from "./pooling";
