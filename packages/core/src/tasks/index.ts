export * from "./spec";
export * from "./lines";
export * from "./validate";
export * from "./pynorm";
export * from "./fingerprint";
export * from "./minhash";
export * from "./split";
export * from "./leakage";
