import { parseLabels } from "./enroll";

// Pure helpers behind the registration panel: what an admin says an agent is (its labels, the
// shell-job opt-in, its GPUs). The claim matches jobs against this record, never against what the
// agent's socket reports, so the form starts from the record and sends only what was changed.

export type RegisteredAgent = {
  labels: string[];
  shellJobs: boolean;
  registeredGpus: number | null;
  registeredGpuMemoryMb: number | null;
};

export type RegistrationForm = { labels: string; shellJobs: boolean; gpus: string; gpuMemoryGb: string };

export type RegistrationInput = {
  id: string;
  labels?: string[];
  shellJobs?: boolean;
  gpus?: number;
  gpuMemoryMb?: number;
};

export function registrationForm(a: RegisteredAgent): RegistrationForm {
  return {
    labels: a.labels.join(", "),
    shellJobs: a.shellJobs,
    gpus: a.registeredGpus === null ? "" : String(a.registeredGpus),
    gpuMemoryGb: a.registeredGpuMemoryMb === null ? "" : String(Math.round((a.registeredGpuMemoryMb / 1024) * 10) / 10),
  };
}

/** The agents.register input for what differs from the record, or the first field that is not a valid value. */
export function registrationInput(
  id: string,
  before: RegisteredAgent,
  form: RegistrationForm,
): { ok: true; input: RegistrationInput } | { ok: false; error: string } {
  const input: RegistrationInput = { id };
  const labels = parseLabels(form.labels).sort();
  if (labels.join("\n") !== [...before.labels].sort().join("\n")) input.labels = labels;
  if (form.shellJobs !== before.shellJobs) input.shellJobs = form.shellJobs;
  if (form.gpus.trim() !== "") {
    const n = Number(form.gpus);
    if (!Number.isInteger(n) || n < 0 || n > 64) return { ok: false, error: "GPUs: a whole number from 0 to 64" };
    if (n !== before.registeredGpus) input.gpus = n;
  }
  if (form.gpuMemoryGb.trim() !== "") {
    const gb = Number(form.gpuMemoryGb);
    if (!Number.isFinite(gb) || gb < 0 || gb > 4096) return { ok: false, error: "GPU memory: GB per GPU, 0 to 4096" };
    const mb = Math.round(gb * 1024);
    if (mb !== before.registeredGpuMemoryMb) input.gpuMemoryMb = mb;
  }
  return { ok: true, input };
}

/** Whether the input changes anything (the id alone does not). */
export const changesSomething = (input: RegistrationInput): boolean => Object.keys(input).length > 1;
