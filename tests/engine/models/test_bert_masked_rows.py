"""BERT's training step as a GPU runs it: the masked positions gathered into a fixed number of rows give the same
loss, accuracy, count and gradients as the boolean index, without one wait for the device (the boolean index
waits twice a step; counted on the CPU, where the same ops run) and as one compiled graph."""

import pytest
import torch

from engine.config.settings import BertConfig
from engine.models import bert as bert_module
from engine.models.bert import IGNORE, Bert, mask_tokens
from engine.models.masked_rows import masked_lm_loss, masked_rows, row_bound
from tests.engine.models.device_waits import CountWaits

VOCAB, BATCH, SEQ = 120, 6, 24


def tiny_bert(seed: int = 0) -> Bert:
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=VOCAB, hidden=32, layers=2, heads=2, intermediate=64, max_len=64, seq_len=SEQ,
                     dropout=0.0)
    return Bert(cfg).double().train()


def batch(seed: int, prob: float = 0.15) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, VOCAB, (BATCH, SEQ), generator=gen)
    ids[:, 0], ids[:, SEQ // 2], ids[:, -1] = 2, 3, 3
    segments = torch.zeros_like(ids)
    segments[:, SEQ // 2 + 1:] = 1
    inputs, labels = mask_tokens(ids, ids < 5, mask_id=4, vocab_size=VOCAB, first_normal=5, prob=prob, generator=gen)
    return {"inputs": inputs, "segments": segments, "labels": labels,
            "is_next": torch.randint(0, 2, (BATCH,), generator=gen)}


def step(model: Bert, b: dict[str, torch.Tensor], static: bool, monkeypatch: pytest.MonkeyPatch
         ) -> tuple[dict[str, torch.Tensor], list[torch.Tensor]]:
    monkeypatch.setattr(bert_module, "STATIC_ROWS_ON_CPU", static)
    model.zero_grad(set_to_none=True)
    out = model(b["inputs"], b["segments"], None, b["labels"], b["is_next"])
    out["loss"].backward()
    return out, [p.grad.clone() for p in model.parameters() if p.grad is not None]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fixed_rows_give_the_boolean_index_loss_accuracy_count_and_gradients(seed: int,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    model, b = tiny_bert(seed), batch(seed)
    chosen = int((b["labels"] != IGNORE).sum())
    assert 0 < chosen < row_bound(BATCH * SEQ, 0.15)  # filler rows are there to be ignored
    exact, exact_grads = step(model, b, False, monkeypatch)
    fixed, fixed_grads = step(model, b, True, monkeypatch)
    assert int(fixed["mlm_count"]) == int(exact["mlm_count"]) == chosen
    assert int(fixed["mlm_correct"]) == int(exact["mlm_correct"])
    torch.testing.assert_close(fixed["mlm_loss"], exact["mlm_loss"], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(fixed["loss"], exact["loss"], rtol=1e-12, atol=1e-12)
    assert len(fixed_grads) == len(exact_grads)
    for mine, theirs in zip(fixed_grads, exact_grads, strict=True):
        torch.testing.assert_close(mine, theirs, rtol=1e-10, atol=1e-12)


def test_the_fixed_rows_step_never_waits_for_the_device(monkeypatch: pytest.MonkeyPatch) -> None:
    model, b = tiny_bert(), batch(0)
    with CountWaits() as fixed:
        step(model, b, True, monkeypatch)
    with CountWaits() as exact:
        step(model, b, False, monkeypatch)
    assert sum(fixed.waits.values()) == 0, fixed.waits
    assert sum(exact.waits.values()) >= 2, exact.waits  # the hidden states' and the labels' boolean index


def test_the_fixed_rows_step_compiles_to_one_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch._dynamo

    model, b = tiny_bert(), batch(0)

    def loss(inputs: torch.Tensor, segments: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return model(inputs, segments, None, labels)["loss"]

    breaks = {}
    for static in (True, False):
        monkeypatch.setattr(bert_module, "STATIC_ROWS_ON_CPU", static)
        torch._dynamo.reset()
        breaks[static] = torch._dynamo.explain(loss)(b["inputs"], b["segments"], b["labels"]).graph_break_count
    torch._dynamo.reset()
    assert breaks[True] == 0
    assert breaks[False] >= 1  # what it replaces: the boolean index's data-dependent size


def test_evaluation_and_the_cpu_keep_the_boolean_index() -> None:
    """Off by default where the host is the device (filler rows would only add work), on Apple's MPS (not run
    there yet) and outside training."""
    model = tiny_bert()
    assert not model._static_rows(torch.device("cpu"))
    assert model._static_rows(torch.device("cuda"))
    assert not model._static_rows(torch.device("mps"))
    model.eval()
    assert not model._static_rows(torch.device("cuda"))


def test_more_chosen_than_rows_scores_the_first_ones_and_none_chosen_gives_zero() -> None:
    chosen = torch.zeros(4, 10, dtype=torch.bool)
    chosen[0, [1, 7]] = chosen[2, [0, 3, 9]] = True
    rows, valid = masked_rows(chosen, 3)
    assert rows.tolist() == [1, 7, 20] and valid.tolist() == [True, True, True]
    rows, valid = masked_rows(chosen, 8)
    assert rows[:5].tolist() == [1, 7, 20, 23, 29] and valid.tolist() == [True] * 5 + [False] * 3
    logits = torch.randn(8, 5, requires_grad=True)
    loss, correct, count = masked_lm_loss(logits, torch.full((8,), IGNORE), torch.zeros(8, dtype=torch.bool))
    loss.backward()
    assert float(loss.detach()) == 0.0 and int(correct) == 0 and int(count) == 0
    assert torch.isfinite(logits.grad).all()


@pytest.mark.parametrize("whole_word", [False, True])
def test_the_bound_holds_every_drawn_batch_and_wastes_little(whole_word: bool) -> None:
    """BERT-base's batch (128 x 128 tokens) drawn 2,000 times: no batch chose more than the bound, which is
    at most 15% above the mean count (the head's extra rows; 30% for whole words, whose count spreads more)."""
    tokens, prob = 128 * 128, 0.15
    bound = row_bound(tokens, prob, whole_word)
    gen = torch.Generator().manual_seed(0)
    draws = torch.rand(2000, tokens, generator=gen) < prob
    if whole_word:  # words of two pieces, chosen together
        draws = draws[:, : tokens // 2].repeat_interleave(2, dim=1)
    assert int(draws.sum(1).max()) <= bound
    assert bound <= (1.3 if whole_word else 1.15) * tokens * prob
    assert bound % 8 == 0
    assert row_bound(10, 0.15) == 10  # a tiny batch: every position
