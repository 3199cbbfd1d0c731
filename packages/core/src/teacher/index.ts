export * from "./schemas";
export * from "./prompt";
export * from "./answer";
export * from "./cache";
export * from "./cost";
export * from "./sft";
export * from "./quality";
