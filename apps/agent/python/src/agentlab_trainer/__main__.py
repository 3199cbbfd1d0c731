"""CLI: python -m agentlab_trainer {tiny-model,train,dpo,grpo,score,generate,tokenize,inspect-model,episode-policy} --spec FILE

stdout carries JSON lines only (progress / artifact / generation / log / result); human logs go to
stderr. Exit codes: 0 ok, 1 internal error, 2 bad usage, 3 user error (spec or data), 143 canceled."""

from __future__ import annotations

import argparse
import sys
import traceback

from .common import (
    EXIT_CANCELED,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USER,
    Canceled,
    CancelFlag,
    UserError,
    emit,
    load_spec,
    log,
)

COMMANDS = ("tiny-model", "train", "dpo", "grpo", "score", "generate", "tokenize", "inspect-model", "episode-policy")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agentlab_trainer")
    parser.add_argument("command", choices=COMMANDS)
    parser.add_argument("--spec", required=True, help="path of the JSON spec")
    args = parser.parse_args(argv)
    cancel = CancelFlag().install()
    try:
        if args.command in ("train", "dpo", "grpo"):
            from . import distributed

            if distributed.from_env() is not None:  # a torchrun worker: it must not outlive torchrun
                distributed.die_with_torchrun()
        spec = load_spec(args.spec, args.command)
        if args.command == "tiny-model":
            from . import tiny_model

            tiny_model.main(spec)
        elif args.command == "train":
            from . import distributed, train

            ranks = distributed.ranks_of(spec)
            if ranks > 1 and distributed.from_env() is None:  # torchrun, one rank per GPU
                distributed.preflight(spec, ranks)
                return distributed.launch(ranks, "train", args.spec, cancel)
            train.main(spec, cancel)
        elif args.command == "dpo":
            from . import dpo

            dpo.main(spec, cancel)
        elif args.command == "grpo":
            from . import grpo

            grpo.main(spec, cancel)
        elif args.command == "score":
            from . import score

            score.main(spec)
        elif args.command == "generate":
            from . import generate

            generate.main(spec, cancel)
        elif args.command == "episode-policy":
            from . import episode_policy

            episode_policy.main(spec, cancel)
        elif args.command == "inspect-model":
            from . import inspect_model

            inspect_model.main(spec)
        else:
            from . import tokenize_cmd

            tokenize_cmd.main(spec)
        return EXIT_OK
    except Canceled as e:
        payload = e.args[0] if e.args and isinstance(e.args[0], dict) else None
        # train and dpo report the epochs they finished with their run record
        key = {"train": "record", "dpo": "dpo", "grpo": "grpo"}.get(args.command)
        fields = {key: payload} if payload is not None and key else {}
        emit(
            "result",
            command=args.command,
            status="canceled",
            error={"kind": "canceled", "message": "canceled by signal"},
            **fields,
        )
        return EXIT_CANCELED
    except UserError as e:
        log(f"user error: {e}")
        emit("result", command=args.command, status="failed", error={"kind": "user_error", "message": str(e)})
        return EXIT_USER
    except Exception as e:  # noqa: BLE001 - report anything else as an internal error
        traceback.print_exc(file=sys.stderr)
        emit(
            "result",
            command=args.command,
            status="failed",
            error={"kind": "internal_error", "message": f"{type(e).__name__}: {e}"},
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
