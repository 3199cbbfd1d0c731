"""The grading runner's modules, in one package so that no task file (a `judge.py`, a `wire.py`)
can shadow them or be shadowed by them: the zygote imports these before any task code runs."""
