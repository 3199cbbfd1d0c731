"use client";

import { Field, inputClass, NumberField, setter, type FormPart } from "./FormField";
import { PromptVariantField } from "./PromptVariantField";

// The recipe's training block: length (epochs, or steps cut into epochs' snapshots), batches (by
// samples or tokens), schedule, LoRA, quantization, checkpointing, the GPUs of one run and what its
// prompts show.

export function TrainingFields({ f, setF, error }: FormPart) {
  const set = setter({ f, setF });
  return (
    <>
      <Field
        path="training.epochs"
        error={error}
        label="Epochs"
        hint="Passes over the data, a snapshot after each; with training steps set, the number of snapshots."
      >
        <input
          className={inputClass}
          name="epochs"
          type="number"
          min={1}
          max={50}
          value={f.epochs}
          onChange={set("epochs")}
        />
      </Field>
      <NumberField
        part={{ f, setF, error }}
        k="trainSteps"
        path="training.steps"
        label="Training steps (optional)"
        attrs={{
          min: 1,
          max: 1_000_000,
          hint: "Empty: epochs decide the length. Set: exactly this many optimizer steps, the data cycled in shuffled passes and cut into the epochs' snapshots, so arms with equal tokens take equal steps.",
        }}
      />
      <Field path="training.learningRate" error={error} label="Learning rate">
        <input className={inputClass} name="learningRate" value={f.learningRate} onChange={set("learningRate")} />
      </Field>
      <Field path="training.batchSize" error={error} label="Batch size">
        <input
          className={inputClass}
          name="batchSize"
          type="number"
          min={1}
          value={f.batchSize}
          onChange={set("batchSize")}
        />
      </Field>
      <NumberField
        part={{ f, setF, error }}
        k="batchTokens"
        path="training.batchTokens"
        label="Batch tokens (optional)"
        attrs={{
          min: 8,
          hint: "Empty: batches of batch size samples. Set: samples packed into a batch up to this many tokens (batch size unused), so each step sees about the same tokens; one GPU only.",
        }}
      />
      <Field path="training.maxLength" error={error} label="Max length">
        <input
          className={inputClass}
          name="maxLength"
          type="number"
          min={8}
          value={f.maxLength}
          onChange={set("maxLength")}
        />
      </Field>
      <Field path="training.lora.r" error={error} label="LoRA r">
        <input className={inputClass} name="loraR" type="number" min={1} value={f.loraR} onChange={set("loraR")} />
      </Field>
      <Field path="training.lora.alpha" error={error} label="LoRA alpha">
        <input className={inputClass} name="loraAlpha" value={f.loraAlpha} onChange={set("loraAlpha")} />
      </Field>
      <Field path="training.lora.dropout" error={error} label="LoRA dropout">
        <input className={inputClass} name="loraDropout" value={f.loraDropout} onChange={set("loraDropout")} />
      </Field>
      <Field path="training.lora.targets" error={error} label="LoRA targets">
        <input className={inputClass} name="targets" value={f.targets} onChange={set("targets")} />
      </Field>
      <Field path="training.quantization" error={error} label="Quantization">
        <select className={inputClass} name="quantization" value={f.quantization} onChange={set("quantization")}>
          <option value="auto">auto</option>
          <option value="nf4">nf4 (QLoRA)</option>
          <option value="none">none</option>
        </select>
      </Field>
      <Field path="training.gradientCheckpointing" error={error} label="Gradient checkpointing">
        <select className={inputClass} name="checkpointing" value={f.checkpointing} onChange={set("checkpointing")}>
          <option value="auto">auto (on for real models)</option>
          <option value="on">on</option>
          <option value="off">off</option>
        </select>
      </Field>
      <Field
        path="training.gpus"
        error={error}
        label="GPUs per run"
        hint="N > 1: N ranks on one agent with N free GPUs (a GPU method)."
      >
        <input
          className={inputClass}
          name="gpus"
          type="number"
          min={1}
          max={64}
          value={f.gpus}
          onChange={set("gpus")}
        />
      </Field>
      <Field path="training.parallel" error={error} label="Multi-GPU sharing">
        <select className={inputClass} name="parallel" value={f.parallel} onChange={set("parallel")}>
          <option value="ddp">ddp (a whole model per GPU)</option>
          <option value="fsdp">fsdp (the model sharded across GPUs)</option>
        </select>
      </Field>
      <PromptVariantField which="trainPrompt" f={f} setF={setF} error={error} />
    </>
  );
}
