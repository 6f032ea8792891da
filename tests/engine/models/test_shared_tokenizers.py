"""Models loaded from the same tokenizer files share one tokenizer: the Run history's checkpoints, MiniLM and the
masked LM made on it no longer make one each (two 2.1 MB tables and ~61,000 small strings for MiniLM's). Changed
files make another; a left-to-right variant is its own; a tokenizer no model holds is let go; several threads
encode with a shared one at once and get what one thread gets."""

import gc
import json
import shutil
import threading
import weakref

import pytest

from engine.models import shared_tokenizers
from engine.models.masked_lm_head import _tokenizer, base_folder
from engine.models.shared_tokenizers import shared_tokenizer

TEXTS = ["The bank by the river flooded.", "She put the money in the bank.", "A play in two acts.",
         "Zürich's banks didn't open", "the [MASK] sat on the mat"]


@pytest.fixture(autouse=True)
def _nothing_kept():
    shared_tokenizers.forget()
    yield
    shared_tokenizers.forget()


def _copy_of_minilms_tokenizer(to):
    to.mkdir()
    for path in base_folder("all-minilm-l6-v2").iterdir():
        if path.is_file() and path.suffix not in shared_tokenizers.WEIGHT_SUFFIXES:
            shutil.copy(path, to / path.name)
    return to


def test_the_same_files_give_the_same_tokenizer_and_changed_files_another(tmp_path):
    folder = base_folder("all-minilm-l6-v2")
    first = _tokenizer(folder, causal=False, shared=True)
    assert _tokenizer(folder, causal=False, shared=True) is first
    copy = _copy_of_minilms_tokenizer(tmp_path / "copy")
    assert _tokenizer(copy, causal=False, shared=True) is first  # by the files' bytes, not the folder's name
    config = (copy / "tokenizer_config.json").read_text(encoding="utf-8")
    (copy / "tokenizer_config.json").write_text(config.replace('"do_lower_case": true', '"do_lower_case": false'),
                                                encoding="utf-8")
    assert config != (copy / "tokenizer_config.json").read_text(encoding="utf-8")
    changed = _tokenizer(copy, causal=False, shared=True)
    assert changed is not first
    assert _tokenizer(folder, causal=False, shared=False) is not first  # (a training's own, unshared)
    other = _copy_of_minilms_tokenizer(tmp_path / "other")  # a file of a name no list of tokenizer files holds
    (other / "spm.model").write_bytes(b"another model's sentence pieces")
    assert _tokenizer(other, causal=False, shared=True) is not first


def test_a_left_to_right_models_tokenizer_is_its_own_and_leaves_the_masked_ones_alone():
    folder = base_folder("all-minilm-l6-v2")
    masked = _tokenizer(folder, causal=False, shared=True)
    causal = _tokenizer(folder, causal=True, shared=True)
    assert causal is not masked and _tokenizer(folder, causal=True, shared=True) is causal
    assert causal.bos_token == "[CLS]" and masked.bos_token is None
    assert causal("a text")["input_ids"] == masked("a text")["input_ids"]


def test_the_apps_loads_share_one_tokenizer():
    from engine import api

    minilm, mlm = api.load("all-minilm-l6-v2"), api.load("minilm-mlm")  # a Hugging Face folder, a masked LM on it
    assert mlm.adapter.hf_tokenizer is minilm.adapter.hf_tokenizer
    assert mlm.adapter.tokenizer is minilm.adapter.tokenizer  # (the Rust tokenizer the engine encodes with)
    assert len(mlm.fill_mask("the river [MASK] flooded", k=3)[0].tokens) == 3  # and both still answer
    assert minilm.contextual_vectors("the river bank flooded") is not None


def test_a_tokenizer_no_model_holds_is_let_go_and_a_failed_make_keeps_nothing(tmp_path):
    copy = _copy_of_minilms_tokenizer(tmp_path / "copy")
    held = weakref.ref(_tokenizer(copy, causal=False, shared=True))
    gc.collect()
    assert held() is not None  # kept for the next load of the same files…
    for other in ("a", "b"):  # … until newer ones take its place
        shared_tokenizer(copy, lambda: _Made(), variant=other)
    gc.collect()
    assert held() is None

    def fails():
        raise OSError("no tokenizer here")

    with pytest.raises(OSError, match="no tokenizer here"):
        shared_tokenizer(copy, fails, variant="c")
    made = _Made()
    assert shared_tokenizer(copy, lambda: made, variant="c") is made


class _Made:
    pass


@pytest.mark.parametrize("threads", [1, 2, 4, 8])
def test_threads_encoding_with_one_shared_tokenizer_get_what_one_thread_gets(threads):
    folder = base_folder("all-minilm-l6-v2")
    backend = _tokenizer(folder, causal=False, shared=True).backend_tokenizer
    alone = [backend.encode(t, add_special_tokens=False).ids for t in TEXTS]
    alone += [e.ids for e in backend.encode_batch(TEXTS, add_special_tokens=False)]
    errors: list[BaseException] = []
    results: list[list[list[int]]] = []
    start = threading.Barrier(threads)

    def encode():
        try:
            tok = _tokenizer(folder, causal=False, shared=True)
            start.wait()
            mine = []
            for _ in range(50):
                mine = [tok.backend_tokenizer.encode(t, add_special_tokens=False).ids for t in TEXTS]
                mine += [e.ids for e in tok.backend_tokenizer.encode_batch(TEXTS, add_special_tokens=False)]
            results.append(mine)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    workers = [threading.Thread(target=encode) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors and len(results) == threads
    assert all(r == alone for r in results)


def _copy_of_run(name, to, config_change=None):
    shutil.copytree(base_of_ours(name), to)
    if config_change is not None:
        config = json.loads((to / "config.json").read_text(encoding="utf-8"))
        config_change(config)
        (to / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return to


def base_of_ours(name):
    from engine.checkpoints.shipped import DEFAULT_CHECKPOINTS

    return DEFAULT_CHECKPOINTS / name


def test_our_runs_checkpoints_share_one_tokenizer_until_no_model_holds_it(tmp_path):
    """bert-tiny's tokenizer (a ``tokenizers.Tokenizer``): checkpoints with the same tokenizer.json (another step's
    config) share it, another tokenizer.json gets its own, and once no model holds it, it goes (after the two kept
    for the next load)."""
    from engine import api

    first = api.load(str(_copy_of_run("bert-tiny", tmp_path / "step-100")))
    later = api.load(str(_copy_of_run("bert-tiny", tmp_path / "step-200",
                                      lambda c: c.update(note="another checkpoint of the run"))))
    assert later.adapter.tokenizer is first.adapter.tokenizer
    assert later.fill_mask("the river [MASK] flooded", k=2)[0].tokens == first.fill_mask(
        "the river [MASK] flooded", k=2)[0].tokens
    other_dir = _copy_of_run("bert-tiny", tmp_path / "other")
    tokenizer_json = json.loads((other_dir / "tokenizer.json").read_text(encoding="utf-8"))
    tokenizer_json["model"]["vocab"]["riverbank"] = len(tokenizer_json["model"]["vocab"])
    (other_dir / "tokenizer.json").write_text(json.dumps(tokenizer_json), encoding="utf-8")
    other = api.load(str(other_dir))
    assert other.adapter.tokenizer is not first.adapter.tokenizer
    assert other.adapter.tokenizer.token_to_id("riverbank") is not None
    assert first.adapter.tokenizer.token_to_id("riverbank") is None
    held = weakref.ref(first.adapter.tokenizer)
    del first, later, other
    gc.collect()
    assert held() is not None  # kept for the next load
    for variant in ("a", "b"):  # the two kept for the next load give way to newer ones
        shared_tokenizer(tmp_path, lambda: _Made(), variant=variant)
    gc.collect()
    assert held() is None
