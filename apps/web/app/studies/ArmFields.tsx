"use client";

import { Button } from "../_components/Button";
import { Field, inputClass } from "../experiments/FormField";
import { emptyArm, type StudyForm } from "./form";

// The arms of the study form: each one factor (a recipe field's dotted path) and its value, and
// whether its contrast against the reference is primary. An arm's recipe error (a second field
// changed, a value of the wrong type) lands under its value, labelled "Arm N value".

export function ArmFields({ f, setF, error }: { f: StudyForm; setF: (f: StudyForm) => void; error: unknown }) {
  const setArm = (i: number, patch: Partial<StudyForm["arms"][number]>) =>
    setF({ ...f, arms: f.arms.map((a, j) => (j === i ? { ...a, ...patch } : a)) });
  return (
    <div className="space-y-3">
      {f.arms.map((a, i) => (
        // Arms are edited in place and only removed from the end, so the index is a stable key.
        // biome-ignore lint/suspicious/noArrayIndexKey: see above
        <fieldset key={i} className="grid gap-3 sm:grid-cols-[1fr_1.4fr_1fr_auto]" aria-label={`arm ${i + 1}`}>
          <Field path={`arms.${i}.name`} error={error} label={`Arm ${i + 1} name`}>
            <input
              className={inputClass}
              name={`arm-${i}-name`}
              value={a.name}
              onChange={(e) => setArm(i, { name: e.target.value })}
            />
          </Field>
          <Field
            path={`arms.${i}.factor`}
            error={error}
            label={`Arm ${i + 1} factor`}
            hint="The one recipe field it changes, e.g. training.learningRate"
          >
            <input
              className={inputClass}
              name={`arm-${i}-factor`}
              value={a.factor}
              onChange={(e) => setArm(i, { factor: e.target.value })}
            />
          </Field>
          <Field path={`arms.${i}.recipe`} error={error} label={`Arm ${i + 1} value`} hint="JSON, or plain text">
            <input
              className={inputClass}
              name={`arm-${i}-value`}
              value={a.value}
              onChange={(e) => setArm(i, { value: e.target.value })}
            />
          </Field>
          <label className="flex items-center gap-1.5 pt-5 text-xs text-zinc-600">
            <input
              type="checkbox"
              name={`arm-${i}-primary`}
              checked={a.primary}
              onChange={(e) => setArm(i, { primary: e.target.checked })}
            />
            primary contrast vs reference
          </label>
        </fieldset>
      ))}
      <div className="flex gap-2">
        <Button size="sm" onClick={() => setF({ ...f, arms: [...f.arms, emptyArm(f.arms.length)] })}>
          Add an arm
        </Button>
        {f.arms.length > 1 ? (
          <Button size="sm" variant="ghost" onClick={() => setF({ ...f, arms: f.arms.slice(0, -1) })}>
            Remove the last arm
          </Button>
        ) : null}
      </div>
    </div>
  );
}
