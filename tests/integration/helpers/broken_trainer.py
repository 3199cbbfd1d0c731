"""Deliberately broken variants of the trainer for tests/integration/learning-proof.test.ts
(the learning proof). Each patches ONE step of the real agentlab_trainer and then runs its real CLI, so the
test can show that the chain would catch that bug: a broken variant must not "win".

    python broken_trainer.py labels-on-prompt train --spec SPEC.json
        labels cover the prompt instead of the answer (inverted assistant mask; pre-flight off,
        since it would refuse exactly this)
    python broken_trainer.py ignore-adapter generate --spec SPEC.json
        the adapter folder is hash-checked as usual but never applied (generation uses the base)
    python broken_trainer.py untrained-adapter SPEC.json
        writes epoch-0, a LoRA snapshot exactly as initialised (no optimizer step), and prints
        {"path", "sha256"}: "evaluating an untrained epoch"
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def labels_on_prompt() -> None:
    from agentlab_trainer import data as D

    real_encode = D.encode

    def encode(tokenizer, messages, eot, max_length=None):
        e = real_encode(tokenizer, messages, eot, max_length)
        labels = [tok if lab == D.IGNORE else D.IGNORE for tok, lab in zip(e.input_ids, e.labels, strict=True)]
        labels[0] = D.IGNORE
        return D.Encoded(e.input_ids, labels)

    D.encode = encode
    D.preflight = lambda *a, **k: None


def ignore_adapter() -> None:
    import peft

    peft.PeftModel.from_pretrained = lambda model, *a, **k: model


def untrained_adapter(spec_path: str) -> None:
    from agentlab_trainer.modeling import attach_lora, load_model
    from agentlab_trainer.train import save_snapshot

    spec = json.loads(Path(spec_path).read_text())
    model, _ = load_model(spec["base_model"], device="cpu", quantization="none", method="lora-fp32")
    model = attach_lora(model, spec["lora"], int(spec.get("seed", 0)))
    out = Path(spec["output_dir"])
    out.mkdir(parents=True, exist_ok=True)
    path, digest, _ = save_snapshot(model, out, 0, {"epoch": 0, "steps": 0, "note": "untrained: LoRA as initialised"})
    print(json.dumps({"path": str(path), "sha256": digest}))


if __name__ == "__main__":
    mode, rest = sys.argv[1], sys.argv[2:]
    if mode == "untrained-adapter":
        untrained_adapter(rest[0])
        sys.exit(0)
    {"labels-on-prompt": labels_on_prompt, "ignore-adapter": ignore_adapter}[mode]()
    from agentlab_trainer.__main__ import main

    sys.exit(main(rest))
