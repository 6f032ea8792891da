"""ELMo's training step as a GPU runs it: the adaptive softmax's loss equals torch's with one wait for the device
instead of six a direction, and the recurrences stay in float32 under bf16 autocast (where CUDA's cuDNN takes
them in one call a layer and the sums keep their precision). Counted on the CPU: the ops that make a GPU's host
wait are the same ops here."""

import pytest
import torch
from torch import nn

from engine.config.settings import ElmoConfig
from engine.models import adaptive_softmax, elmo
from engine.models.adaptive_softmax import adaptive_nll
from engine.models.elmo import BiLM
from tests.engine.models.device_waits import CountWaits


def softmax_and_inputs(seed: int, rows: int = 300) -> tuple[nn.AdaptiveLogSoftmaxWithLoss, torch.Tensor, torch.Tensor]:
    torch.manual_seed(seed)
    asm = nn.AdaptiveLogSoftmaxWithLoss(16, 400, [20, 100], div_value=4.0)
    x = torch.randn(rows, 16, dtype=torch.float64)
    # every cluster used, the rare ones less (as a corpus's words are)
    target = torch.cat([torch.randint(0, 20, (rows // 2,)), torch.randint(20, 100, (rows // 3,)),
                        torch.randint(100, 400, (rows - rows // 2 - rows // 3,))])[torch.randperm(rows)]
    return asm.double(), x, target


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_one_wait_loss_and_its_gradients_equal_torchs_adaptive_softmax(seed: int) -> None:
    asm, x, target = softmax_and_inputs(seed)
    xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    ours = adaptive_nll(asm, xa, target)
    ours.mean().backward()
    ours_grads = [p.grad.clone() for p in asm.parameters()]
    asm.zero_grad()
    theirs = -asm(xb, target).output
    theirs.mean().backward()
    torch.testing.assert_close(ours, theirs, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(xa.grad, xb.grad, rtol=1e-12, atol=1e-12)
    for mine, p in zip(ours_grads, asm.parameters(), strict=True):
        torch.testing.assert_close(mine, p.grad, rtol=1e-12, atol=1e-12)


def test_a_batch_without_rare_words_and_a_bad_target() -> None:
    asm, x, _ = softmax_and_inputs(0, rows=10)
    frequent = torch.randint(0, 20, (10,))
    torch.testing.assert_close(adaptive_nll(asm, x, frequent), -asm(x, frequent).output)
    with pytest.raises(ValueError, match="outside"):
        adaptive_nll(asm, x, torch.full((10,), 400))


def tiny_bilm() -> BiLM:
    torch.manual_seed(0)
    return BiLM(ElmoConfig(proj=16, hidden=32, filters="1:8,2:8", max_chars=10, dropout=0.0), 300)


def batch(vocab: int = 300) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(3)
    return (torch.randint(1, 200, (4, 6, 10), generator=g), torch.randint(0, vocab, (4, 6), generator=g),
            torch.randint(0, vocab, (4, 6), generator=g))


def test_an_elmo_step_waits_for_the_device_once_where_torchs_softmax_waited_twelve_times(monkeypatch) -> None:
    model = tiny_bilm()
    chars, nxt, prv = batch()
    with CountWaits() as ours:
        loss = model(chars, nxt, prv)
        loss["loss"].backward()
    monkeypatch.setattr(adaptive_softmax, "ONE_SYNC", False)
    with CountWaits() as before:
        old = model(chars, nxt, prv)
    assert sum(ours.waits.values()) == 1, ours.waits
    assert sum(before.waits.values()) == 12, before.waits  # what the step did: 6 per direction
    for key in ("loss", "forward_loss", "backward_loss"):
        torch.testing.assert_close(loss[key], old[key])


def test_the_recurrences_run_in_float32_under_bf16_autocast_and_the_loss_stays_close() -> None:
    model = tiny_bilm()
    chars, nxt, prv = batch()
    seen: list[torch.dtype] = []
    for lstm in (*model.forward_lm.lstms, *model.backward_lm.lstms):
        lstm.register_forward_hook(lambda module, args, out: seen.append(out[0].dtype))
    full = model(chars, nxt, prv)["loss"]
    seen.clear()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mixed = model(chars, nxt, prv)["loss"]
        _, fwd, bwd = model.layers(chars)
    assert seen and set(seen) == {torch.float32}
    assert {h.dtype for h in (*fwd, *bwd)} == {torch.float32}
    assert abs(float(mixed.detach()) - float(full.detach())) < 0.02 * float(full.detach())  # only the char-CNN rounds to bf16


def test_the_old_recurrence_path_is_still_there_to_measure_against(monkeypatch) -> None:
    model = tiny_bilm()
    chars, _, _ = batch()
    monkeypatch.setattr(elmo, "LSTM_IN_FP32", False)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        _, fwd, _ = model.layers(chars)
    assert fwd[0].dtype == torch.bfloat16
