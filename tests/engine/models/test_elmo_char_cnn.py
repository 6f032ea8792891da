"""ELMo's character CNN on a query's words: the same vectors as without padding, and oneDNN's convolutions built
for a few word counts only, not one set per count (each kept in oneDNN's cache, scattered through the heap)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import torch

from engine.config.settings import ElmoConfig
from engine.models.elmo import CharCNN
from engine.models.packed_linear import row_bucket


def cnn() -> CharCNN:
    torch.manual_seed(0)
    return CharCNN(ElmoConfig(proj=32, hidden=64, filters="1:8,2:16,3:16", max_chars=12, dropout=0.0)).eval()


def test_a_querys_words_get_the_vectors_of_the_unpadded_pass():
    model = cnn()
    for words in (1, 3, 5, 7, 13):
        chars = torch.randint(1, 200, (1, words, 12))
        with torch.no_grad():
            padded = model(chars)  # (no gradients: padded to row_bucket's count)
        with torch.enable_grad():
            plain = model(chars)
        assert padded.shape == plain.shape == (1, words, 32)
        assert torch.allclose(padded, plain.detach(), atol=1e-5)


SHAPES = """
import torch
from engine.config.settings import ElmoConfig
from engine.models.elmo import CharCNN
torch.manual_seed(0)
model = CharCNN(ElmoConfig(proj=32, hidden=64, filters="1:8,2:16", max_chars=12, dropout=0.0)).eval()
with torch.inference_mode():
    for words in range(3, 11):
        model(torch.randint(1, 200, (1, words, 12)))
print("ran")
"""


def test_onednn_convolutions_are_built_for_a_few_word_counts_only():
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", SHAPES], cwd=root, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "ONEDNN_VERBOSE": "1", "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ran" in done.stdout
    counts = {int(m) for m in re.findall(r",convolution,.*?\bmb(\d+)_", done.stdout)}
    if not counts:  # (a torch build whose convolutions do not run through oneDNN: nothing to bound)
        return
    assert counts <= {row_bucket(n) for n in range(3, 11)}, counts  # 5 counts for 8, not 8
