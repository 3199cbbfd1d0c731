"""No packing, no cross-sample attention: a sample's logits are the same alone or in a padded batch."""

from __future__ import annotations

import torch

from agentlab_trainer import data as D
from agentlab_trainer.modeling import load_model
from helpers import make_samples


def test_no_sample_attends_to_another(tiny_model, tokenizer):
    eot, _ = D.resolve_eot(tokenizer)
    enc = [D.encode(tokenizer, s["messages"], eot) for s in make_samples(3, offset=5)]
    assert len({len(e) for e in enc}) == 3
    model, _ = load_model(str(tiny_model), device="cpu", quantization="none")
    model.eval()
    pad = tokenizer.pad_token_id
    with torch.no_grad():
        batch = D.collate(enc, pad)
        together = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        for r, e in enumerate(enc):
            alone = model(input_ids=torch.tensor([e.input_ids])).logits[0]
            torch.testing.assert_close(together[r, : len(e)], alone, atol=1e-5, rtol=1e-4)
        # changing another sample's tokens does not move this sample's logits
        changed = batch["input_ids"].clone()
        changed[1, : len(enc[1])] = torch.flip(changed[1, : len(enc[1])], dims=[0])
        again = model(input_ids=changed, attention_mask=batch["attention_mask"]).logits
        torch.testing.assert_close(again[0, : len(enc[0])], together[0, : len(enc[0])], atol=1e-5, rtol=1e-4)
        assert not torch.allclose(again[1, : len(enc[1])], together[1, : len(enc[1])], atol=1e-3)
    # padding carries no labels
    assert (batch["labels"][batch["attention_mask"] == 0] == D.IGNORE).all()
