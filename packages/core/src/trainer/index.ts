export * from "./schemas";
export * from "./events";
export * from "./dpo";
export * from "./grpo";
export * from "./score";
export * from "./inspect";
export * from "./episode-policy";
export * from "./memory";
export { LORA_DEFAULT_TARGETS, TrainerDoctor } from "./shared";
