"""The app's warm-up: word2vec's kernel compiled into numba's cache by a process of its own, so that the
next process (the user's first training run) loads it instead of compiling it for 15 s."""

import json
import os
import subprocess
import sys

import pytest

from engine import api
from engine.models.word2vec import cpu as word2vec_cpu

LOAD = """
import json
from engine.models.word2vec import cpu as word2vec_cpu
word2vec_cpu.compile_now()
stats = word2vec_cpu._sgd_block.stats
print(json.dumps([sum(stats.cache_hits.values()), sum(stats.cache_misses.values())]))
"""


@pytest.mark.skipif(not word2vec_cpu.available(), reason="numba is not installed")
def test_after_the_warm_up_a_new_process_loads_the_kernel_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))  # an empty cache: a fresh install
    warm = api.warm_up_in_background()
    assert warm is not None and warm.wait(timeout=300) == 0
    done = subprocess.run([sys.executable, "-c", LOAD], capture_output=True, text=True, timeout=300,
                          env={**os.environ})
    hits, misses = json.loads(done.stdout.strip().splitlines()[-1])
    assert hits >= 1 and misses == 0, done.stderr[-2000:]
