"""The one gradient loop, on a toy job: gradient accumulation equals the larger batch, the learning-rate
schedule warms up then decays, and a stop saves and says so."""

import threading
from types import SimpleNamespace

import pytest
import torch

from engine.training.context import TrainContext
from engine.training.events import CheckpointSaved, RunFinished, StepMetrics
from engine.training.gradient_loop import GradientJob, optimise

X = torch.arange(32, dtype=torch.float32).reshape(16, 2) / 10
Y = X @ torch.tensor([[2.0], [-1.0]]) + 0.5


def run(tmp_path, batch, accumulate, steps, stop=None, on_step=None, on_forward=None, budget=None, schedule=True,
        compile=False):
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    spec = SimpleNamespace(out=str(tmp_path), device="cpu", seed=0, resume=False, log_every=1, mixed_precision=False,
                           kind="toy", budget_schedule=schedule, compile=compile)
    ctx = TrainContext(spec, stop)
    ctx.budget = budget
    per_step = batch * accumulate
    saves = []

    def batches(epoch, first):
        for b in range(first * accumulate, (16 // per_step) * accumulate):
            yield {"x": X[b * batch : (b + 1) * batch], "y": Y[b * batch : (b + 1) * batch]}

    def save(state, keep):
        saves.append(state["step"])
        yield CheckpointSaved(state["step"], str(tmp_path))

    job = GradientJob(model=model, lr=0.1, weight_decay=0.0, warmup=0, clip=1e9, total_steps=steps,
                      steps_per_epoch=16 // per_step, unit="examples", units_per_step=per_step, batches=batches,
                      loss=lambda m, b: (on_forward or (lambda: None))() or torch.nn.functional.mse_loss(m(b["x"]), b["y"]),
                      validate=lambda: iter(()),
                      save=save, summary=lambda status: (status, {}), accumulate=accumulate,
                      after_step=on_step or (lambda step: iter(())))
    events = list(optimise(ctx, job))
    return model, events, saves


def test_accumulating_micro_batches_equals_one_larger_batch(tmp_path):
    big, _, _ = run(tmp_path / "a", batch=8, accumulate=1, steps=4)
    small, events, _ = run(tmp_path / "b", batch=4, accumulate=2, steps=4)
    assert torch.allclose(big.weight, small.weight, atol=1e-6) and torch.allclose(big.bias, small.bias, atol=1e-6)
    steps = [e for e in events if isinstance(e, StepMetrics)]
    assert [e.step for e in steps] == [1, 2, 3, 4] and steps[-1].progress == 1.0
    assert steps[-1].loss < steps[0].loss


def test_the_learning_rate_decays_linearly_to_zero(tmp_path):
    _, events, _ = run(tmp_path, batch=4, accumulate=1, steps=4)
    rates = [e.lr for e in events if isinstance(e, StepMetrics)]
    assert rates == pytest.approx([0.1, 0.075, 0.05, 0.025])


def test_a_budget_schedule_decays_the_learning_rate_to_zero_when_the_time_is_spent(tmp_path):
    """--budget-schedule: the rate follows the budget's clock when the budget ends before the last step."""
    spent = iter([0.0, 0.5, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0])
    budget = SimpleNamespace(fraction=lambda: next(spent), seconds=60.0, used=lambda: 30.0)
    _, events, _ = run(tmp_path, batch=4, accumulate=1, steps=8, budget=budget)
    rates = [e.lr for e in events if isinstance(e, StepMetrics)]
    assert rates[:4] == pytest.approx([0.1, 0.05, 0.01, 0.0])  # by steps alone: 0.1, 0.0875, 0.075, 0.0625


def test_without_a_budget_schedule_a_time_budget_leaves_the_rate_to_the_steps(tmp_path):
    budget = SimpleNamespace(fraction=lambda: 0.99, seconds=60.0, used=lambda: 59.4)
    _, events, _ = run(tmp_path, batch=4, accumulate=1, steps=4, budget=budget, schedule=False)
    assert [e.lr for e in events if isinstance(e, StepMetrics)] == pytest.approx([0.1, 0.075, 0.05, 0.025])


def stop_after(stop, at):
    """An after-step hook that sets ``stop`` once step ``at`` has finished."""
    def hook(step):
        if step == at:
            stop.set()
        return iter(())

    return hook


def test_a_stop_saves_and_ends_the_run_as_stopped(tmp_path):
    stop = threading.Event()
    _, events, saves = run(tmp_path, batch=4, accumulate=1, steps=8, stop=stop, on_step=stop_after(stop, 2))
    assert isinstance(events[-1], RunFinished) and events[-1].status == "stopped" and events[-1].step == 2
    assert saves == [2]


def test_a_stop_during_the_forward_pass_skips_that_step_and_saves_the_last_finished_one(tmp_path, monkeypatch):
    import engine.training.gradient_loop as gl

    after_two = threading.Event()
    reference, _, _ = run(tmp_path / "ref", batch=4, accumulate=1, steps=8, stop=after_two,
                          on_step=stop_after(after_two, 2))
    stop = threading.Event()
    forwards, backwards = [], []
    original = gl.backward
    monkeypatch.setattr(gl, "backward", lambda loss, scaler: backwards.append(1) or original(loss, scaler))

    def ctrl_c_in_the_third_forward():
        forwards.append(1)
        if len(forwards) == 3:
            stop.set()

    model, events, saves = run(tmp_path / "run", batch=4, accumulate=1, steps=8, stop=stop,
                               on_forward=ctrl_c_in_the_third_forward)
    assert events[-1].status == "stopped" and events[-1].step == 2 and saves == [2]
    assert len(forwards) == 3 and len(backwards) == 2  # step 3 never ran its backward pass
    assert torch.allclose(model.weight, reference.weight) and torch.allclose(model.bias, reference.bias)


def test_cpu_training_gives_freed_memory_back_every_few_steps(tmp_path, monkeypatch):
    import engine.training.gradient_loop as gl

    trims = []
    monkeypatch.setattr(gl, "release_memory", lambda: trims.append(1) or True)
    monkeypatch.setattr(gl, "TRIM_EVERY", 2)
    run(tmp_path, batch=4, accumulate=1, steps=8)
    assert len(trims) == 4  # (an RSS probe of a MiniLM adaptation: 1.5 GB without, 0.57 GB with)


def test_the_optimiser_update_is_fused_only_where_every_weight_is_on_cuda():
    from engine.training.optim import adamw

    assert not torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))]).defaults.get("fused")  # torch's own default
    assert not adamw(torch.nn.Linear(2, 2), 1e-3, 0.01).defaults["fused"]  # a CPU model: the plain update
    if torch.cuda.is_available():  # pinned to the GPU where there is one (bench/gpu_check.py runs this there)
        model = torch.nn.Linear(2, 2).to("cuda")
        assert adamw(model, 1e-3, 0.01).defaults["fused"]
        model.bias.data = model.bias.data.cpu()  # one weight off the GPU: no fused update for the lot
        assert not adamw(model, 1e-3, 0.01).defaults["fused"]


def test_a_compiled_run_takes_the_steps_the_plain_one_takes_and_saves_plain_weights(tmp_path, monkeypatch):
    """--compile: the steps run a compiled model (here torch.compile's eager backend, which needs no compiler:
    what is checked is the loop's use of it), the updates and the saved weights are the plain model's own."""
    compiled = []
    real = torch.compile

    def spy(module, **kwargs):
        compiled.append(module)
        return real(module, backend="eager")

    monkeypatch.setattr(torch, "compile", spy)
    plain, plain_events, _ = run(tmp_path / "a", batch=4, accumulate=1, steps=4)
    assert not compiled  # off unless asked
    fast, events, _ = run(tmp_path / "b", batch=4, accumulate=1, steps=4, compile=True)
    assert len(compiled) == 1 and isinstance(compiled[0], torch.nn.Linear)
    losses = [e.loss for e in events if isinstance(e, StepMetrics)]
    assert losses == pytest.approx([e.loss for e in plain_events if isinstance(e, StepMetrics)], rel=1e-5)
    assert torch.allclose(fast.weight, plain.weight, atol=1e-6)
