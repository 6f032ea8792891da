"""Queries' packed products give what the plain model gives, follow weights loaded in place (a scrubbed
step), and leave training untouched."""

import copy

import pytest
import torch

from engine.config.settings import BertConfig, GPTConfig
from engine.models.bert import Bert
from engine.models.gpt import GPT
from engine.models.packed_linear import PackedLinear, pack_linears, usable

pytestmark = pytest.mark.skipif(not usable(), reason="oneDNN's packed linear is not available in this torch build")


def small(kind: str) -> torch.nn.Module:
    torch.manual_seed(0)
    if kind == "bert":
        return Bert(BertConfig(hidden=64, layers=2, heads=2, intermediate=128, max_len=32, vocab_size=300)).eval()
    return GPT(GPTConfig(hidden=64, layers=2, heads=2, intermediate=128, max_len=32, vocab_size=300)).eval()


def outputs(model: torch.nn.Module, ids: torch.Tensor) -> torch.Tensor:
    with torch.inference_mode():
        if isinstance(model, Bert):
            hidden, _ = model.encode(ids, None, None, need_weights=True)
            return model.mlm_logits(hidden[-1])
        hidden, _ = model.encode(ids, need_weights=True)
        return model.logits(hidden[-1])


@pytest.mark.parametrize("kind", ["bert", "gpt"])
def test_packed_model_predicts_what_the_plain_one_does(kind):
    plain = small(kind)
    packed = copy.deepcopy(plain)
    count = pack_linears(packed)
    assert count > 0 and any(isinstance(m, PackedLinear) for m in packed.modules())
    assert list(packed.state_dict()) == list(plain.state_dict())  # checkpoints are unchanged
    ids = torch.randint(0, 300, (2, 17))
    expected, got = outputs(plain, ids), outputs(packed, ids)
    assert torch.allclose(got, expected, atol=1e-4)
    assert torch.equal(got.argmax(-1), expected.argmax(-1))


@pytest.mark.parametrize("kind", ["bert", "gpt"])
def test_weights_loaded_in_place_are_used_at_once(kind):
    """The history scrubber loads another step's weights into the same model: a stale packed copy would
    show the previous step's predictions."""
    packed = small(kind)
    pack_linears(packed)
    ids = torch.randint(0, 300, (1, 9))
    before = outputs(packed, ids)
    other = small(kind)
    with torch.no_grad():
        for p in other.parameters():
            p.mul_(1.5).add_(0.01)
    packed.load_state_dict(other.state_dict())
    after = outputs(packed, ids)
    assert not torch.allclose(after, before, atol=1e-3)
    assert torch.allclose(after, outputs(other, ids), atol=1e-4)


def test_training_through_a_packed_model_gets_the_plain_gradients():
    plain = small("bert").train()
    packed = copy.deepcopy(plain)
    pack_linears(packed)
    for model in (plain, packed):
        torch.manual_seed(1)
        ids = torch.randint(0, 300, (2, 11))
        hidden, _ = model.encode(ids, None, None, need_weights=False)
        model.mlm_logits(hidden[-1]).logsumexp(-1).mean().backward()
    for (name, a), (_, b) in zip(plain.named_parameters(), packed.named_parameters(), strict=True):
        if a.grad is None:  # (the pooler and NSP head take no part in the masked LM)
            assert b.grad is None, name
            continue
        assert torch.allclose(a.grad, b.grad, atol=1e-5), name
    assert plain.layers[0].ffn_in.weight.grad.abs().sum() > 0


def test_packed_copies_of_all_models_stay_within_the_budget(monkeypatch):
    """Models used less recently give their packed copies back; used again, they pack anew and answer the same;
    an unloaded model's copies stop counting."""
    import gc

    from engine.models import packed_linear

    gc.collect()
    base = packed_linear.packed_bytes()  # (models of other tests still alive)
    first, second = small("bert"), small("gpt")
    pack_linears(first)
    pack_linears(second)
    ids = torch.randint(0, 300, (2, 9))
    expected_first = outputs(first, ids)
    held_by_one = packed_linear.packed_bytes() - base
    outputs(second, ids)
    both = packed_linear.packed_bytes() - base
    assert both > held_by_one > 0
    monkeypatch.setattr(packed_linear, "PACKED_BUDGET_BYTES", base + both - held_by_one // 2)  # room for one model and a bit
    monkeypatch.setattr(packed_linear, "PACKED_IN_USE_S", 0.0)  # (every pass here is seconds apart, as queries are)
    outputs(second, ids)  # the second model, used last: the first's copies are let go at the next new copy
    third = small("bert")
    with torch.no_grad():
        for p in third.parameters():
            p.mul_(1.1)
    pack_linears(third)
    outputs(third, ids)
    assert packed_linear.packed_bytes() <= packed_linear.PACKED_BUDGET_BYTES
    assert not any("_packed" in m.__dict__ or "_qkv_packed" in m.__dict__ for m in first.modules())
    assert torch.allclose(outputs(first, ids), expected_first, atol=1e-5)  # packed anew, the same answers
    assert any("_packed" in m.__dict__ for m in first.modules())
    del first, second, third
    gc.collect()
    assert packed_linear.packed_bytes() <= base


def test_a_model_bigger_than_the_budget_is_not_packed_again_at_every_pass(monkeypatch):
    """Copies in use are kept over the budget: a model whose linears alone exceed it would otherwise let its first
    layers' copies go while packing its last ones, and pack everything anew at every query."""
    from engine.models import packed_linear

    monkeypatch.setattr(packed_linear, "PACKED_BUDGET_BYTES", 1)
    model = small("bert")
    pack_linears(model)
    ids = torch.randint(0, 300, (2, 9))
    expected = outputs(model, ids)
    first = {id(m): m.__dict__["_packed"][1] for m in model.modules() if "_packed" in m.__dict__}
    assert first
    from engine import api

    api.release_memory()  # as the window does after a query: the copies it just used stay
    assert torch.allclose(outputs(model, ids), expected, atol=1e-5)
    again = {id(m): m.__dict__.get("_packed", (None, None))[1] for m in model.modules() if id(m) in first}
    assert all(again[k] is first[k] for k in first)  # the same copies, not new ones


def test_copies_kept_over_the_budget_while_in_use_are_let_go_once_they_are_not(monkeypatch):
    """Copies in use stay over the budget; when nothing uses them any more, the next ``release_memory`` (the
    window calls it after its queries) brings the copies back within the budget, without a new copy being made."""
    import types

    from engine import api
    from engine.models import packed_linear

    now = [1000.0]  # the module's clock, moved by hand
    monkeypatch.setattr(packed_linear, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    base = packed_linear.packed_bytes()  # (models of other tests still alive)
    monkeypatch.setattr(packed_linear, "PACKED_BUDGET_BYTES", base + 1)
    model = small("bert")
    pack_linears(model)
    ids = torch.randint(0, 300, (2, 9))
    expected = outputs(model, ids)
    assert packed_linear.packed_bytes() > packed_linear.PACKED_BUDGET_BYTES  # in use: kept over the budget
    now[0] += packed_linear.PACKED_IN_USE_S / 2
    api.release_memory()
    assert packed_linear.packed_bytes() > packed_linear.PACKED_BUDGET_BYTES  # still in use a moment ago
    now[0] += packed_linear.PACKED_IN_USE_S
    api.release_memory()
    assert packed_linear.packed_bytes() <= packed_linear.PACKED_BUDGET_BYTES
    assert not any("_packed" in m.__dict__ or "_qkv_packed" in m.__dict__ for m in model.modules())
    assert torch.allclose(outputs(model, ids), expected, atol=1e-5)  # packed anew when used again


def test_release_memory_while_another_thread_is_still_importing_the_packing_module(monkeypatch):
    """A worker's release_memory found engine.models.packed_linear in sys.modules while another thread was still
    importing it (no functions defined yet) and raised "partially initialized module … has no attribute
    'trim_packed'" (seen once in a talk's export). Such a module has packed nothing: nothing to let go, no error."""
    import sys
    import types

    from engine import api

    monkeypatch.setitem(sys.modules, "engine.models.packed_linear", types.ModuleType("engine.models.packed_linear"))
    api.release_memory()  # no AttributeError


def test_gelu_gives_f_gelus_values_and_gradients():
    from engine.models.packed_linear import gelu

    for shape in [(1, 64), (2, 5, 64), (7,), (3, 1, 1, 64)]:
        x = torch.randn(*shape)
        with torch.inference_mode():
            assert torch.allclose(gelu(x), torch.nn.functional.gelu(x), atol=1e-6)
    x = torch.randn(2, 5, 64, requires_grad=True)
    gelu(x).sum().backward()  # (with gradients: F.gelu itself)
    y = x.detach().clone().requires_grad_(True)
    torch.nn.functional.gelu(y).sum().backward()
    assert torch.equal(x.grad, y.grad)


GELU_PRIMITIVES = """
import torch
from torch import nn
from engine.config.settings import BertConfig
from engine.models.bert import Bert
from engine.models.packed_linear import pack_linears
torch.manual_seed(0)
models = [Bert(BertConfig(hidden=64, layers=2, heads=2, intermediate=128, max_len=32, vocab_size=300)).eval(),
          nn.Sequential(nn.Linear(64, 128), nn.GELU()).eval()]
try:
    from transformers.activations import GELUActivation
    models.append(nn.Sequential(nn.Linear(64, 128), GELUActivation()).eval())
except ImportError:
    pass
for model in models:
    pack_linears(model)
with torch.inference_mode():
    for n in range(2, 10):  # eight sentence lengths
        hidden, _ = models[0].encode(torch.randint(0, 300, (1, n)), None, None, need_weights=False)
        models[0].mlm_logits(hidden[-1])
        for model in models[1:]:
            model(torch.randn(1, n, 64))
print("ran", len(models))
"""


def test_a_querys_gelu_builds_no_onednn_primitive_for_each_sentence_length():
    """oneDNN builds and caches a primitive for every shape its GELU meets (a JIT kernel and a tree of constants,
    scattered through the heap: the chaos bench's first holder of mostly free pages); a packed model's GELUs,
    ours and transformers', take ATen's kernel."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", GELU_PRIMITIVES], cwd=root, capture_output=True, text=True,
                          env={**os.environ, "ONEDNN_VERBOSE": "1", "PYTHONPATH": str(root)}, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ran" in done.stdout
    eltwise = [line for line in done.stdout.splitlines() if ",eltwise," in line and "gelu" in line]
    assert not eltwise, f"{len(eltwise)} of oneDNN's GELU runs, e.g. {eltwise[0]}"
