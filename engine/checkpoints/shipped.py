"""Where the checkpoints shipped with the app live, and finding a run folder by path or shipped name.
Torch-free: the explorer reads it on the GUI thread."""

from __future__ import annotations

from pathlib import Path

from engine.errors import CheckpointError

# the small checkpoints shipped with the app (made by `bash assets/make_default_checkpoints.sh`)
DEFAULT_CHECKPOINTS = Path(__file__).resolve().parents[2] / "assets" / "checkpoints"


def run_folder(name_or_path: str | Path) -> Path:
    """A run folder given by path, or by the name of a shipped default checkpoint ("minilm-mlm")."""
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path
    shipped = DEFAULT_CHECKPOINTS / str(name_or_path)
    if str(name_or_path) and "/" not in str(name_or_path) and shipped.is_dir():
        return shipped
    raise CheckpointError(f"no run folder at {name_or_path} (nor a shipped checkpoint of that name)")
