"""SFT data: chat-template rendering, assistant-only labels, pre-flight checks, length-grouped
batches (by sample count or by tokens) without packing, and padded collation."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .common import UserError, read_jsonl

IGNORE = -100
EOT_CANDIDATES = ("<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "</s>")
ROLES = {"system", "user", "assistant"}


@dataclass
class Encoded:
    input_ids: list[int]
    labels: list[int]

    @property
    def n_supervised(self) -> int:
        return sum(1 for x in self.labels if x != IGNORE)

    def __len__(self) -> int:
        return len(self.input_ids)


def load_sft(path: str) -> list[list[dict[str, Any]]]:
    """The samples' messages. An assistant turn with `train: false` (core SftMessage: a trajectory's
    failed attempt) stays in the conversation and gets no labels."""
    rows = read_jsonl(path)
    conversations = []
    for i, row in enumerate(rows):
        msgs = row.get("messages")
        if not isinstance(msgs, list) or not msgs:
            raise UserError(f"{path}: sample {i} has no 'messages' list")
        for m in msgs:
            if not isinstance(m, dict) or m.get("role") not in ROLES or not isinstance(m.get("content"), str):
                raise UserError(
                    f"{path}: sample {i} has a message that is not {{role: system|user|assistant, content: str}}"
                )
            if "train" in m and (m["train"] is not False or m["role"] != "assistant"):
                raise UserError(f"{path}: sample {i}: only an assistant turn can be unsupervised, as train: false")
        conversations.append(
            [{"role": m["role"], "content": m["content"], **({"train": False} if "train" in m else {})} for m in msgs]
        )
    if not conversations:
        raise UserError(f"{path}: dataset is empty")
    return conversations


# Date-dependent chat templates (Llama-3.2 renders today's date into the system header unless
# `date_string` is given) get this fixed date: a prompt must not change from one day to the next
# under an unchanged template hash. The value is Llama-3.1's own template default.
FIXED_DATE_STRING = "26 Jul 2024"


def render(tokenizer, messages: Sequence[dict[str, Any]], *, add_generation_prompt: bool = False) -> str:
    if not getattr(tokenizer, "chat_template", None):
        raise UserError("the tokenizer has no chat template")
    # The template sees role and content only (a supervision flag is no part of the text).
    return tokenizer.apply_chat_template(
        [{"role": m["role"], "content": m["content"]} for m in messages],
        tokenize=False,
        add_generation_prompt=add_generation_prompt,
        date_string=FIXED_DATE_STRING,
    )


def resolve_eot(tokenizer, explicit: str | None = None) -> tuple[str, int]:
    """The end-of-turn token: explicit, else the first known one that the template emits after an
    assistant turn."""
    if explicit:
        tid = tokenizer.convert_tokens_to_ids(explicit)
        if tid is None or tid == getattr(tokenizer, "unk_token_id", None):
            raise UserError(f"eot_token {explicit!r} is not a token of this tokenizer")
        return explicit, int(tid)
    probe = render(tokenizer, [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}])
    vocab = tokenizer.get_vocab()
    for cand in ((tokenizer.eos_token,) if tokenizer.eos_token else ()) + EOT_CANDIDATES:
        if cand and cand in vocab and cand in probe.split("y", 1)[-1]:
            return cand, int(vocab[cand])
    raise UserError("cannot find the end-of-turn token in the chat template; set eot_token")


def assistant_char_spans(tokenizer, messages: Sequence[dict[str, Any]], eot: str) -> tuple[str, list[tuple[int, int]]]:
    """Render the full conversation once, and locate each supervised assistant turn in it: from the
    end of the generation prompt to the end of that turn's end-of-turn token (so inference prompts
    and training prefixes tokenize identically). A turn marked `train: false` is left as context."""
    full = render(tokenizer, messages)
    spans: list[tuple[int, int]] = []
    for i, m in enumerate(messages):
        if m["role"] != "assistant" or m.get("train") is False:
            continue
        try:
            prompt = render(tokenizer, messages[:i], add_generation_prompt=True)
        except Exception:  # noqa: BLE001 - some templates refuse an empty conversation
            if i:
                raise
            prompt = ""
        upto = render(tokenizer, messages[: i + 1])
        if not full.startswith(prompt) or not full.startswith(upto) or not upto.startswith(prompt):
            raise UserError(
                "the chat template is not prefix-stable (rendering a prefix of the conversation changes earlier text); cannot locate assistant turns"
            )
        start = len(prompt)
        end_eot = upto.rfind(eot)
        if end_eot < start:
            end = len(upto)  # no end-of-turn emitted: pre-flight will refuse the sample
        else:
            end = end_eot + len(eot)
        spans.append((start, end))
    return full, spans


def encode(tokenizer, messages: Sequence[dict[str, Any]], eot: str, max_length: int | None = None) -> Encoded:
    """Token ids and labels: assistant spans (content + end-of-turn) keep their ids, the rest is -100.
    Segments are tokenized separately so a token never straddles a prompt/answer boundary."""
    full, spans = assistant_char_spans(tokenizer, messages, eot)
    ids: list[int] = []
    labels: list[int] = []
    cursor = 0
    pieces: list[tuple[str, bool]] = []
    for s, e in spans:
        pieces.append((full[cursor:s], False))
        pieces.append((full[s:e], True))
        cursor = e
    pieces.append((full[cursor:], False))
    for text, supervised in pieces:
        if not text:
            continue
        toks = tokenizer(text, add_special_tokens=False)["input_ids"]
        ids.extend(toks)
        labels.extend(toks if supervised else [IGNORE] * len(toks))
    if max_length is not None and len(ids) > max_length:
        ids, labels = ids[:max_length], labels[:max_length]
    if labels:
        labels[0] = IGNORE  # the first token is never predicted
    return Encoded(ids, labels)


def preflight(samples: Sequence[Encoded], eot_id: int, *, where: str = "dataset") -> None:
    """Refuse to train when a sample has no supervised token, or a supervised span does not end with
    the end-of-turn token (e.g. the template did not emit it or max_length cut it off)."""
    empty: list[int] = []
    no_eot: list[int] = []
    for idx, s in enumerate(samples):
        if s.n_supervised == 0:
            empty.append(idx)
            continue
        # every maximal supervised run must end with end-of-turn
        for j, lab in enumerate(s.labels):
            nxt_sup = j + 1 < len(s.labels) and s.labels[j + 1] != IGNORE
            if lab != IGNORE and not nxt_sup and lab != eot_id:
                no_eot.append(idx)
                break
    problems = []
    if empty:
        problems.append(
            f"{len(empty)} sample(s) with an empty label mask (no assistant tokens), e.g. index {empty[:5]}"
        )
    if no_eot:
        problems.append(
            f"{len(no_eot)} sample(s) whose assistant span does not end with the end-of-turn token (truncated by max_length or template without end-of-turn), e.g. index {no_eot[:5]}"
        )
    if problems:
        raise UserError(f"pre-flight refused {where}: " + "; ".join(problems))


def encode_dataset(tokenizer, path: str, eot: str, eot_id: int, max_length: int | None, where: str) -> list[Encoded]:
    convs = load_sft(path)
    samples = [encode(tokenizer, c, eot, max_length) for c in convs]
    preflight(samples, eot_id, where=where)
    return samples


def length_grouped_batches(
    lengths: Sequence[int], batch_size: int, seed: int, *, mega: int = 32, shuffle: bool = True
) -> list[list[int]]:
    """Batches of similar-length samples, no packing. Shuffle, cut into mega-batches of
    `mega * batch_size`, sort each by length (descending), split into batches, shuffle the batch order.
    Deterministic for (lengths, batch_size, seed)."""
    idx = list(range(len(lengths)))
    rng = random.Random(seed)
    if shuffle:
        rng.shuffle(idx)
    size = max(1, mega * batch_size)
    batches: list[list[int]] = []
    for m in range(0, len(idx), size):
        chunk = sorted(idx[m : m + size], key=lambda i: (-lengths[i], i))
        batches.extend(chunk[b : b + batch_size] for b in range(0, len(chunk), batch_size))
    if shuffle:
        rng.shuffle(batches)
    return batches


def token_batches(lengths: Sequence[int], batch_tokens: int, seed: int, *, mega: int = 32) -> list[list[int]]:
    """Batches packed by tokens, no packing within a row. The run's seeded order is the one
    length_grouped_batches uses: shuffle, cut into mega-batches of about `mega * batch_tokens`
    tokens, sort each by length (descending), so that a batch pads little. Samples in that order
    join a batch until the next would take its length sum past `batch_tokens`; a longer sample is a
    batch of its own. The batch order is shuffled. Deterministic for (lengths, batch_tokens, seed)."""
    idx = list(range(len(lengths)))
    rng = random.Random(seed)
    rng.shuffle(idx)
    chunks: list[list[int]] = [[]]
    tokens = 0
    for i in idx:
        if tokens >= mega * batch_tokens:
            chunks.append([])
            tokens = 0
        chunks[-1].append(i)
        tokens += lengths[i]
    batches: list[list[int]] = []
    for chunk in chunks:
        batch: list[int] = []
        total = 0
        for i in sorted(chunk, key=lambda i: (-lengths[i], i)):
            if batch and total + lengths[i] > batch_tokens:
                batches.append(batch)
                batch, total = [], 0
            batch.append(i)
            total += lengths[i]
        if batch:
            batches.append(batch)
    rng.shuffle(batches)
    return batches


def collate(samples: Sequence[Encoded], pad_id: int, device: Any = "cpu") -> dict[str, Any]:
    """Right-padded tensors; padding has attention_mask 0 and label -100."""
    import torch

    n = max(len(s) for s in samples)
    ids = torch.full((len(samples), n), pad_id, dtype=torch.long)
    labels = torch.full((len(samples), n), IGNORE, dtype=torch.long)
    mask = torch.zeros((len(samples), n), dtype=torch.long)
    for r, s in enumerate(samples):
        ids[r, : len(s)] = torch.tensor(s.input_ids, dtype=torch.long)
        labels[r, : len(s)] = torch.tensor(s.labels, dtype=torch.long)
        mask[r, : len(s)] = 1
    return {"input_ids": ids.to(device), "labels": labels.to(device), "attention_mask": mask.to(device)}


def conversations_stats(tokenizer, path: str, eot: str, eot_id: int, max_length: int | None) -> dict[str, Any]:
    convs = load_sft(path)
    enc = [encode(tokenizer, c, eot, max_length) for c in convs]
    sup = [e.n_supervised for e in enc]
    lens = [len(e) for e in enc]
    refused: dict[str, Any] | None = None
    try:
        preflight(enc, eot_id)
    except UserError as e:
        refused = {"message": str(e)}
    return {
        "samples": len(enc),
        "supervised_tokens": sum(sup),
        "total_tokens": sum(lens),
        "max_tokens": max(lens) if lens else 0,
        "per_sample_supervised": sup,
        "preflight_error": refused,
    }
