"""A tuned-lens run opened as a model: the model it reads (its ``base``, loaded as any other) with the
run's translators attached, so the lab's grid can read it through the tuned lens as well as the logit
lens. Named after the run; the base's own weights are not in the run folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.errors import CheckpointError, Word2BertError


def load_tuned_lens(run_dir: Path, config: dict) -> Any:
    from engine.checkpoints.reading import read_tensors, save_id
    from engine.handles.load import load
    from engine.handles.transformer import TransformerHandle, expected_shapes
    from engine.models.tuned_lens import TunedLens

    base = config.get("base")
    states, dim = config.get("states"), config.get("dim")
    if not isinstance(base, str) or not base or not isinstance(states, int) or not isinstance(dim, int):
        raise CheckpointError(f"{run_dir}/config.json: a tuned lens names its model ('base'), its states and width")
    try:
        handle = load(base)
    except Word2BertError as e:
        raise CheckpointError(f"{run_dir} is a tuned lens for {base}, which does not open here: {e}") from None
    if not isinstance(handle, TransformerHandle):
        raise CheckpointError(f"{run_dir} is a tuned lens for {base}, which is not a Transformer language model")
    adapter = handle.adapter
    if adapter.n_layers + 1 != states or adapter.hidden_size != dim:
        raise CheckpointError(f"{run_dir}: its lens reads {states} states of width {dim}; {base} is not that model "
                              "any more")
    lens = TunedLens(states, dim)
    lens.load_state_dict(read_tensors(run_dir, config, expected_shapes(lens)))
    lens.to(next(adapter.body.parameters()).device).eval()
    handle.tuned_lens = lens
    # which save of its model the lens was trained on ("" for a folder without a save id, a Hugging Face one): a
    # shipped model remade or a run trained on changes the layers, and the lens no longer fits them
    trained_on, now = str(config.get("base_save_id") or ""), save_id(handle.path) if handle.path else ""
    if trained_on and now and trained_on != now:
        handle.tuned_lens_notice = (f"this tuned lens was trained on another save of {config.get('base_name', base)} "
                                    f"({trained_on[:8]}; it is {now[:8]} now): its translators may misread the layers; "
                                    "train it again")
        handle.info["note"] = handle.tuned_lens_notice
    handle.name, handle.path = run_dir.name, str(run_dir)
    metrics = config.get("metrics") or {}
    fit = ""
    if isinstance(metrics.get("kl_tuned"), float) and isinstance(metrics.get("kl_logit"), float):
        fit = f"; held-out KL from the output {metrics['kl_tuned']:.2f} nats (the logit lens: {metrics['kl_logit']:.2f})"
    handle.info.update({"path": str(run_dir), "tuned_lens_of": config.get("base_name", base),
                        "description": f"{config.get('base_name', base)} with a tuned lens ({states - 1} translators, "
                                       f"{config.get('trained_steps', 0):,} steps){fit}",
                        **({"metrics": metrics} if metrics else {})})
    return handle
