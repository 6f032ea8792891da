"""The corpus read into word ids by a forked process while the command starts (engine.data.prefetch)."""

import sys
import threading

import numpy as np
import pytest

from engine.data import prefetch
from engine.data.corpora import cache_dir, get_corpus
from engine.data.text import tokenized_sentences

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads in the process itself off Linux")


def _here(corpus, tmp_path, lowercase=True, max_words=None):
    return prefetch.encode(tokenized_sentences(get_corpus(str(corpus)).sentences("train"), lowercase, max_words),
                           tmp_path / "here")


@pytest.mark.parametrize(("lowercase", "max_words"), [(True, None), (False, 500)])
def test_the_forked_read_gives_what_reading_here_gives(topic_corpus, tmp_path, lowercase, max_words):
    assert prefetch.start(str(topic_corpus), "train", lowercase, max_words)
    fetched = prefetch.take(str(topic_corpus), "train", lowercase, max_words)
    here = _here(topic_corpus, tmp_path, lowercase, max_words)
    try:
        assert fetched is not None
        assert fetched.index == here.index and len(here.index) > 20
        assert np.array_equal(fetched.counts, here.counts)
        assert np.array_equal(np.asarray(fetched.ids), np.asarray(here.ids))
        assert np.array_equal(fetched.starts, here.starts)
        if max_words is not None:  # the cap the run would apply
            assert max_words <= int(fetched.starts[-1]) < max_words + 20
        assert any(w[0].isupper() for w in fetched.index) == (not lowercase)
    finally:
        folder = fetched.folder if fetched else None
        for text in (fetched, here):
            if text is not None:
                text.close()
    assert folder is not None and not folder.exists()  # close removes what the read left


def test_nothing_started_or_a_failed_read_gives_none(tmp_path):
    assert prefetch.take("no-such-start", "train", True, None) is None
    missing = str(tmp_path / "missing.txt")
    assert prefetch.start(missing, "train", True, None)  # the child fails; the run then reads and reports it
    assert prefetch.take(missing, "train", True, None) is None
    assert not any((cache_dir() / "prefetch").glob("ids-*"))


def test_a_stop_while_waiting_ends_the_read(topic_corpus):
    stop = threading.Event()
    stop.set()
    assert prefetch.start(str(topic_corpus), "train", True, 7)
    assert prefetch.take(str(topic_corpus), "train", True, 7, stop) is None
    assert not any((cache_dir() / "prefetch").glob("ids-*"))


def test_cancel_all_removes_pending_reads(topic_corpus):
    assert prefetch.start(str(topic_corpus), "train", True, 11)
    prefetch.cancel_all()
    assert prefetch.take(str(topic_corpus), "train", True, 11) is None
    assert not any((cache_dir() / "prefetch").glob("ids-*"))
