#!/usr/bin/env bash
# The DPO study's GPU recipe, prepared for a lent GPU: `npm run demo -- --dpo-study` (SFT, RFT,
# DPO on near-miss and on on-policy pairs, the swapped-labels control and the dev sweep; 3 seeds,
# one SFT adapter per seed, one test claim) on a local 1.5–7B model with bf16 LoRA and CUDA
# generation (scripts/demo/dpo-study.ts, AGENTLAB_DEMO_GPU_BASE). The device machines reach no
# model hub, so the model is a folder: AGENTLAB_GPU_BASE_MODEL=/path/to/Qwen2.5-Coder-1.5B-Instruct.
# AGENTLAB_DEMO_STUDY_SEEDS=1 runs one seed (the whole study at 3 seeds needs more than a 15 min lease).
# Exit codes: 0 the study reported, 2 no CUDA or no model folder (nothing ran), other = a failure.
# The last stdout line is the demo's JSON line (studyJson, arms, contrasts, log-prob dynamics).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${AGENTLAB_PYTHON:-$ROOT/apps/agent/python/.venv/bin/python}"
[[ -x "$PY" ]] || bash "$ROOT/scripts/setup-python.sh" >&2
if ! "$PY" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 2)"; then
  echo "gpu-dpo-study: no CUDA device: nothing ran" >&2
  exit 2
fi
MODEL="${AGENTLAB_GPU_BASE_MODEL:-}"
if [[ -z "$MODEL" || ! -f "$MODEL/config.json" ]]; then
  echo "gpu-dpo-study: AGENTLAB_GPU_BASE_MODEL must name a local model folder with a config.json (got '${MODEL}'): nothing ran" >&2
  exit 2
fi
cd "$ROOT"
AGENTLAB_DEMO_GPU_BASE="$MODEL" AGENTLAB_DEMO_DIR="${AGENTLAB_DEMO_DIR:-$(mktemp -d)}" exec npx tsx scripts/demo/main.ts --dpo-study
