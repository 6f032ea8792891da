"""The engine's dependencies point one way: a lower layer never imports a higher one (at any depth,
inside functions too), and nothing imports Qt. The layers, bottom to top, are in LAYERS."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# bottom to top; a module may import its own part or the parts on lower lines, never those above
LAYERS = [
    ("engine", "engine.errors", "engine.config", "engine.results", "engine.device"),  # plain definitions
    ("engine.families",),  # every model family declared once (runs and loaders named, imported when asked)
    ("engine.config.checks",),  # checking a config read from a file before anything is built from it
    ("engine.config.run_spec",),  # what one training run is
    ("engine.cancel", "engine.checkpoints.shipped"),  # cancelling a query; where the shipped checkpoints are
    ("engine.data",),  # text, vocabulary, corpora, vectors files, fine-tuning datasets, evaluation sets
    ("engine.models", "engine.checkpoints"),  # networks; run-folder files (neither imports the other)
    ("engine.checkpoints.average",),  # the mean of saves read from run folders
    ("engine.training",),  # the loop, its context and events; the families' runs
    ("engine.finetune",),  # a job of the same loop
    ("engine.handles",),  # loaded models behind one interface; load()
    ("engine.inspection",),  # read-only queries over handles
    ("engine.cli",),
    ("engine.api",),  # the seam: the only module the explorer imports
]


def _part(module: str) -> tuple[int, str]:
    """(layer, part) of a module: the part is the longest prefix named in LAYERS."""
    best = None
    for level, parts in enumerate(LAYERS):
        for part in parts:
            if (module == part or module.startswith(part + ".")) and (best is None or len(part) > len(best[1])):
                best = (level, part)
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return best


def _modules() -> dict[str, Path]:
    out = {}
    for path in (ROOT / "engine").rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return names


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def test_no_layer_imports_a_higher_one():
    known = _modules()
    upward = []
    for module, path in sorted(known.items()):
        level, part = _part(module)
        for name in _imports(path):
            target = _resolve(name, known) if name.startswith("engine") else None
            if target is None or target == module or target == "engine":
                continue
            target_level, target_part = _part(target)
            if target_part != part and target_level >= level:
                upward.append(f"{module} ({part}) imports {target} ({target_part})")
    assert not upward, "\n".join(upward)


def test_every_engine_module_has_a_layer():
    for module in _modules():
        _part(module)


def test_engine_imports_with_qt_blocked():
    code = (
        "import sys\n"
        "for name in ('PySide6', 'PyQt5', 'PyQt6', 'pyqtgraph'): sys.modules[name] = None\n"
        "import pkgutil, importlib, engine\n"
        "for m in pkgutil.walk_packages(engine.__path__, 'engine.'): importlib.import_module(m.name)\n"
        "import engine.api\n"
        "assert not any(k.startswith(('PySide6', 'PyQt')) and sys.modules[k] is not None for k in sys.modules)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_the_api_imports_without_torch():
    """The window opens before torch loads: ``import engine.api`` must not pull it in."""
    code = "import sys; import engine.api; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
