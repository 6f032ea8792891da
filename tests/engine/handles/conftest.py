"""The lab's models for the lens, tracing and attribution tests: our BERT and GPT, and Hugging Face folders
(an encoder, a BERT made a decoder, a GPT-2), once per module; a GPT-2 whose heads matter."""

import pytest
import torch

from engine import api
from tests.engine.finetune.test_one_wrapper import tiny_gpt2_folder, tiny_hf_folder


@pytest.fixture(scope="module")
def lab_handles(contextual_runs, tmp_path_factory):
    root = tmp_path_factory.mktemp("lab")
    return {"bert": api.load(contextual_runs["bert"][0]), "gpt": api.load(contextual_runs["gpt"][0]),
            "hf-bert": api.load(tiny_hf_folder(root / "enc", contextual_runs, decoder=False)),
            "hf-decoder": api.load(tiny_hf_folder(root / "dec", contextual_runs, decoder=True)),
            "hf-gpt2": api.load(tiny_gpt2_folder(root / "gpt2", contextual_runs))}


@pytest.fixture(scope="module")
def sharp_gpt2(contextual_runs, tmp_path_factory):
    """A random 2-layer Hugging Face GPT-2 with its weights scaled up 6 times: its attention is peaked and its heads
    matter (at the initial scale every head's knock-out moves the prediction by less than 1e-3)."""
    handle = api.load(tiny_gpt2_folder(tmp_path_factory.mktemp("sharp") / "gpt2", contextual_runs))
    with torch.no_grad():
        for name, parameter in handle.adapter.body.named_parameters():
            if "ln" not in name:
                parameter.mul_(6.0)
    return handle
