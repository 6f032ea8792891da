"""A loaded Hugging Face folder keeps answering when its weights file is written again in place
(save_pretrained or a Trainer saving into the folder, a cp over it). transformers 5 left the weights mapped onto
the file, and the next query after the rewrite killed the app with SIGBUS (exit 135)."""

import subprocess
import sys
from pathlib import Path

import pytest

REWRITE_THEN_ASK = """
import sys
from engine import api
handle = api.load(sys.argv[1])
open(sys.argv[2], "wb").close()  # written again in place: truncated first
result = handle.attention("the cat sat on the mat")
print("answered", len(result.tokens))
"""


def mapped(path: Path) -> bool:
    """Whether this process has ``path`` mapped into memory (Linux)."""
    return any(line.rstrip("\n").endswith(str(path)) for line in Path("/proc/self/maps").read_text().splitlines())


def test_a_loaded_folder_answers_after_its_weights_file_is_rewritten(contextual_runs, tmp_path):
    from engine.cli.export import export_hf

    folder = export_hf(contextual_runs["bert"][0], tmp_path / "hf")
    weights = Path(folder) / "model.safetensors"
    run = subprocess.run([sys.executable, "-c", REWRITE_THEN_ASK, str(folder), str(weights)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"exit {run.returncode}: {run.stderr[-2000:]}"
    assert "answered" in run.stdout


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads Linux's /proc/self/maps")
def test_an_encoder_base_is_read_into_memory_not_left_mapped():
    import gc

    from engine.models.masked_lm_head import base_folder, build_to_load

    model, _, _ = build_to_load("all-minilm-l6-v2")
    gc.collect()
    assert not mapped(base_folder("all-minilm-l6-v2") / "model.safetensors")
    assert sum(p.numel() for p in model.parameters()) > 0
