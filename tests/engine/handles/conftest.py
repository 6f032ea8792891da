"""The lab's models for the lens, tracing and attribution tests: our BERT and GPT, and Hugging Face folders
(an encoder, a BERT made a decoder, a GPT-2), once per module."""

import pytest

from engine import api
from tests.engine.finetune.test_one_wrapper import tiny_gpt2_folder, tiny_hf_folder


@pytest.fixture(scope="module")
def lab_handles(contextual_runs, tmp_path_factory):
    root = tmp_path_factory.mktemp("lab")
    return {"bert": api.load(contextual_runs["bert"][0]), "gpt": api.load(contextual_runs["gpt"][0]),
            "hf-bert": api.load(tiny_hf_folder(root / "enc", contextual_runs, decoder=False)),
            "hf-decoder": api.load(tiny_hf_folder(root / "dec", contextual_runs, decoder=True)),
            "hf-gpt2": api.load(tiny_gpt2_folder(root / "gpt2", contextual_runs))}
