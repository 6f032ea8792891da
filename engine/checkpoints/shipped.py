"""Where the checkpoints shipped with the app live, and finding a run folder by path or shipped name.
Torch-free: the explorer reads it on the GUI thread."""

from __future__ import annotations

from pathlib import Path

from engine.errors import CheckpointError

INSTALLED = Path("share") / "word2bert" / "assets"  # where a wheel puts them (pyproject's data-files), under its prefix


def assets_folder(beside: Path | None = None, prefixes: tuple[str | None, ...] | None = None) -> Path:
    """The app's assets: beside the code in a clone (an editable install) and in the one-folder app; else where a
    wheel installed them (``pip install .``): under the environment's prefix, or the user's (``--user``)."""
    beside = Path(__file__).resolve().parents[2] / "assets" if beside is None else beside
    if (beside / "checkpoints").is_dir():
        return beside
    if prefixes is None:
        import site
        import sys
        import sysconfig

        prefixes = (sysconfig.get_path("data"), sys.prefix, site.USER_BASE)
    for prefix in prefixes:
        if prefix and (Path(prefix) / INSTALLED / "checkpoints").is_dir():
            return Path(prefix) / INSTALLED
    return beside  # (none: the library lists no default checkpoints, and says why)


# the small checkpoints shipped with the app (made by `bash assets/make_default_checkpoints.sh`)
DEFAULT_CHECKPOINTS = assets_folder() / "checkpoints"


def run_folder(name_or_path: str | Path) -> Path:
    """A run folder given by path, or by the name of a shipped default checkpoint ("minilm-mlm")."""
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path
    shipped = DEFAULT_CHECKPOINTS / str(name_or_path)
    if str(name_or_path) and "/" not in str(name_or_path) and shipped.is_dir():
        return shipped
    raise CheckpointError(f"no run folder at {name_or_path} (nor a shipped checkpoint of that name)")
