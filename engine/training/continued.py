"""Pretraining continued from an earlier run (``init_from``): a BERT, GPT or ELMo taken on to new text.

The run starts from the earlier run's weights, reads with its tokenizer (or ELMo's word list) and has its
architecture — the settings its family declares as ``architecture`` (engine/families.py) are taken from it,
and the run says which of its own it replaced. How it learned — the settings its family declares as
``objective`` (masking, NSP, dropout, the window length) — stays the earlier run's unless the new run is
given its own (``kept_settings``: the CLI fills in what no flag gave, the app's form shows them to change).
The rest is the new run's: the corpus and the schedule (warmup, then decay). This is what "Don't Stop
Pretraining" (Gururangan et al., 2020) calls domain-adaptive pretraining: a general model taken on to the
text of a field, or a shipped checkpoint trained on for longer.

A resumed run reads its own saves; the earlier run is only read when the run begins.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import CheckpointError, InputError

# what a run's config.json keeps of how it began: carried into the saves of a resumed run
STARTED_FIELDS = ("init_from", "init_from_steps", "init_from_folder", "init_from_save", "init_embeddings",
                  "init_embeddings_rows", "vocabulary_rows")


@dataclass
class Source:
    """The earlier run a new one goes on from."""

    name: str  # as the user gave it (a folder or a shipped name)
    folder: Path
    config: dict[str, Any]
    notes: list[str]  # what the run should say when it starts

    def started(self) -> dict[str, Any]:
        """The config.json fields that record it (the steps: every step behind its weights, its own start too;
        the folder: where it was, whatever the directory a later reader starts in; the save: which of the saves
        that folder may hold over time it was)."""
        steps = int(self.config.get("trained_steps", 0) or 0) + int(self.config.get("init_from_steps", 0) or 0)
        return {"init_from": self.name, "init_from_steps": steps, "init_from_folder": str(self.folder.resolve()),
                "init_from_save": str(self.config.get("save_id") or "")}

    def file(self, name: str) -> Path:
        """A file of its folder by name (a name from its config.json: never a path out of the folder)."""
        if not name or Path(name).name != name or name in (".", ".."):
            raise CheckpointError(f"init_from: {self.folder}/config.json names {name!r}, not a file in the run folder")
        path = self.folder / name
        if not path.is_file():
            raise CheckpointError(f"init_from: {self.folder} has no {name}")
        return path

    def load_into(self, model: Any) -> None:
        """Its weights into ``model`` (built from the settings it gave): every tensor, each of the model's shape."""
        from engine.checkpoints.reading import read_tensors

        tensors = read_tensors(self.folder, self.config)
        own = model.state_dict()
        missing, extra = sorted(set(own) - set(tensors)), sorted(set(tensors) - set(own))
        wrong = sorted(k for k in set(own) & set(tensors) if tuple(own[k].shape) != tuple(tensors[k].shape))
        if missing or extra or wrong:
            said = "; ".join(f"{what}: {', '.join(names[:3])}{' …' if len(names) > 3 else ''}" for what, names in
                             (("missing", missing), ("not in the model", extra), ("of another shape", wrong)) if names)
            raise CheckpointError(f"init_from: {self.folder}'s weights do not fit the model its settings build ({said})")
        model.load_state_dict({k: v.to(own[k].dtype) for k, v in tensors.items()})


def _read_source(kind: str, name: str) -> tuple[Path, dict[str, Any], Any]:
    """The run ``name`` (a folder or shipped name) read for a ``kind`` run to go on from: its folder, its
    config.json and its settings; CheckpointError saying why it cannot be (not a run, a run of another
    family, settings that cannot be read). Reads its config.json only."""
    from engine.checkpoints.reading import read_config
    from engine.checkpoints.shipped import run_folder
    from engine.config.checks import config_from_dict

    folder = run_folder(name)
    try:
        config = read_config(folder)
    except CheckpointError as e:
        hf = "Hugging Face" in str(e)  # (read_config's word for a transformers folder)
        hint = {"bert": f" (a Hugging Face encoder learns on as a masked LM with `word2bert-train mlm-head --base {name}`)",
                "gpt": f" (a Hugging Face encoder learns on as a left-to-right LM with `word2bert-train clm-head --base "
                       f"{name}`)"}.get(kind, "") if hf else ""
        raise CheckpointError(f"init_from: {e}{hint}") from None
    if config.get("kind") != kind:
        raise CheckpointError(f"init_from: {folder} is a {config.get('kind')!r} run, not a {kind} run")
    try:
        theirs = config_from_dict(kind, config.get("model", {}))
    except ValueError as e:
        raise CheckpointError(f"init_from: {folder}'s settings cannot be read: {e}") from None
    return folder, config, theirs


def source(kind: str, cfg: Any, resume: bool) -> Source | None:
    """The run ``cfg.init_from`` names, checked, its architecture copied into ``cfg``; None for a run from
    nothing or a resumed one (its own saves hold what it began from)."""
    name = str(getattr(cfg, "init_from", "") or "").strip()
    if not name or resume:
        return None
    from engine.config.checks import check_config
    from engine.families import family

    folder, config, theirs = _read_source(kind, name)
    replaced = []
    for key in family(kind).architecture:
        mine, its = getattr(cfg, key), getattr(theirs, key)
        if mine != its:
            replaced.append(f"{key} {mine} → {its}")
            setattr(cfg, key, its)
    problems = check_config(kind, cfg)  # this run's own settings against the architecture taken (seq_len ≤ max_len)
    if problems:
        raise InputError(f"{kind} settings with {name}'s architecture: " + "; ".join(problems))
    src = Source(name, folder, config, [])
    steps = src.started()["init_from_steps"]
    src.notes.append(f"goes on from {name} ({steps:,} steps behind it): its weights, its "
                     f"{'word list' if kind == 'elmo' else 'tokenizer'} and its architecture"
                     + (f" ({', '.join(replaced)})" if replaced else "") + "; the schedule starts afresh")
    return src


def kept_settings(kind: str, name: str, architecture: bool = False) -> dict[str, Any]:
    """The settings of how the run ``name`` (a folder or shipped name) of family ``kind`` learned — its
    family's ``objective`` — as a run going on from it keeps them unless given its own (``architecture``:
    and the settings it takes from it whatever it is given, first); {} when there is no such run to read (the
    run itself then says what is wrong). Reads its config.json only."""
    from engine.errors import Word2BertError
    from engine.families import FAMILIES

    if not str(name or "").strip() or kind not in FAMILIES:
        return {}
    try:
        theirs = _read_source(kind, str(name).strip())[2]
    except (Word2BertError, OSError):
        return {}
    keys = (*FAMILIES[kind].architecture, *FAMILIES[kind].objective) if architecture else FAMILIES[kind].objective
    return {key: getattr(theirs, key) for key in keys}


def source_problem(kind: str, name: str) -> str:
    """Why a ``kind`` run cannot go on from ``name`` (a folder or shipped name), as the run would say it when
    started; "" when it can as far as its config.json tells. Reads its config.json only."""
    from engine.errors import Word2BertError

    if not str(name or "").strip():
        return ""
    try:
        _read_source(kind, str(name).strip())
    except (Word2BertError, OSError) as e:
        return str(e)
    return ""


def said_settings(values: dict[str, Any]) -> str:
    """Settings as a sentence says them: "whole word on, dropout 0, seq len 64"."""
    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "on" if v else "off"
        return f"{v:g}" if isinstance(v, float) else str(v)

    return ", ".join(f"{key.replace('_', ' ')} {value(v)}" for key, v in values.items())


def earlier_start(run_dir: Path) -> dict[str, Any]:
    """A resumed run's record of how it began (init_from, init_embeddings), kept in every later save."""
    from engine.checkpoints.reading import read_config

    config = read_config(run_dir)
    return {k: config[k] for k in STARTED_FIELDS if k in config}


def continuable(kind: object) -> bool:
    """Whether a new run can go on pretraining from a run of this family (its family declares an architecture)."""
    from engine.families import FAMILIES

    return isinstance(kind, str) and kind in FAMILIES and bool(FAMILIES[kind].architecture)


def continuable_family(name_or_path: str | Path) -> str | None:
    """The family of a run folder or shipped name that a new run can go on pretraining from, else None.
    Reads its config.json only (no torch, no weights)."""
    from engine.checkpoints.reading import read_config
    from engine.checkpoints.shipped import run_folder
    from engine.errors import Word2BertError

    try:
        kind = read_config(run_folder(name_or_path)).get("kind")
    except (Word2BertError, OSError):
        return None
    return str(kind) if continuable(kind) else None

