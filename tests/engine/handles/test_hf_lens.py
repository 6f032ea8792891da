"""The logit lens on Hugging Face folders whose heads and final norms are named otherwise than BERT's and GPT-2's:
DistilBERT, ALBERT, ELECTRA's generator and ModernBERT (refused before: "no masked-LM head to read layers with"),
and OPT, whose final norm sits under its decoder (before, its middle layers were read without it). The last layer
read through the lens is the model's own prediction; a middle layer is read through the final norm, then the head."""

import numpy as np
import pytest
import torch

from engine import api

SMALL = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64}
MASKED = {
    "distilbert": ("DistilBertForMaskedLM", "DistilBertConfig", {"dim": 32, "n_layers": 2, "n_heads": 4,
                                                                  "hidden_dim": 64}),
    "albert": ("AlbertForMaskedLM", "AlbertConfig", {**SMALL, "embedding_size": 16}),
    "electra": ("ElectraForMaskedLM", "ElectraConfig", {**SMALL, "embedding_size": 16}),
    "deberta-v3": ("DebertaV2ForMaskedLM", "DebertaV2Config", {**SMALL, "legacy": False}),  # its own head's naming
    "modernbert": ("ModernBertForMaskedLM", "ModernBertConfig", {**SMALL, "pad_token_id": 0, "cls_token_id": 101,
                                                                  "sep_token_id": 102, "bos_token_id": 101,
                                                                  "eos_token_id": 102}),
}


@pytest.fixture(scope="module")
def wordpiece():
    import transformers

    from engine.models.masked_lm_head import base_folder

    return transformers.AutoTokenizer.from_pretrained(base_folder("all-minilm-l6-v2"), local_files_only=True)


def _folder(path, model, tokenizer):
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.mark.parametrize("name", list(MASKED))
def test_a_masked_lm_lens_ends_with_its_own_fill_mask(tmp_path, wordpiece, name):
    import transformers

    cls, config_cls, settings = MASKED[name]
    if not hasattr(transformers, cls):
        pytest.skip(f"transformers {transformers.__version__} has no {cls}")
    torch.manual_seed(0)
    model = getattr(transformers, cls)(getattr(transformers, config_cls)(vocab_size=len(wordpiece), **settings))
    h = api.load(_folder(tmp_path / name, model.eval(), wordpiece))
    text = "the cat sat on the [MASK] ."
    lens, fill = h.logit_lens(text, k=5), h.fill_mask(text, k=5)[0]
    assert lens.layers[-1].tokens == fill.tokens
    assert np.allclose(lens.layers[-1].probs, fill.probs, rtol=1e-3, atol=0)
    grid = h.lens_grid(text, k=3)
    assert grid.top_probs.shape[0] == len(lens.layers)  # every layer, at every position


def test_opt_middle_layers_pass_its_final_norm(tmp_path, wordpiece):
    import transformers

    torch.manual_seed(0)
    model = transformers.OPTForCausalLM(transformers.OPTConfig(
        vocab_size=len(wordpiece), hidden_size=32, num_hidden_layers=2, num_attention_heads=4, ffn_dim=64,
        word_embed_proj_dim=32, pad_token_id=0, bos_token_id=101, eos_token_id=102)).eval()
    h = api.load(_folder(tmp_path / "opt", model, wordpiece))
    text = "the cat sat on the"
    lens = h.logit_lens(text, k=5)
    assert lens.layers[-1].tokens == h.next_token(text, k=5).tokens
    ids = torch.tensor([h._encode(text)[0]])  # (the tokens the lens read)
    with torch.no_grad():
        middle = model(input_ids=ids, output_hidden_states=True).hidden_states[1][0, -1]
        probs = model.lm_head(model.model.decoder.final_layer_norm(middle)).softmax(-1)
    top = probs.topk(5)
    assert np.allclose(lens.layers[1].probs, top.values.cpu().numpy(), rtol=1e-3, atol=0)  # (random weights: tiny probs)


@pytest.mark.parametrize("cls, config_cls, settings", [
    ("Gemma2ForCausalLM", "Gemma2Config", {"num_key_value_heads": 1, "head_dim": 8, "final_logit_softcapping": 0.05}),
    ("CohereForCausalLM", "CohereConfig", {"num_key_value_heads": 1, "logit_scale": 0.0625}),
])
def test_a_decoder_that_caps_or_scales_its_logits_is_read_as_it_predicts(tmp_path, wordpiece, cls, config_cls,
                                                                          settings):
    """Gemma 2 soft-caps its logits and Cohere scales them after the head: the lens does what the config says,
    so that its last layer is the model's own next-token prediction (a small cap, so that capping shows)."""
    import transformers

    if not hasattr(transformers, cls):
        pytest.skip(f"transformers {transformers.__version__} has no {cls}")
    torch.manual_seed(0)
    model = getattr(transformers, cls)(getattr(transformers, config_cls)(vocab_size=len(wordpiece), **SMALL,
                                                                         **settings)).eval()
    h = api.load(_folder(tmp_path / cls, model, wordpiece))
    text = "the cat sat on the"
    lens, nxt = h.logit_lens(text, k=5), h.next_token(text, k=5)
    assert lens.layers[-1].tokens == nxt.tokens
    assert np.allclose(lens.layers[-1].probs, nxt.probs, rtol=1e-3, atol=0)
