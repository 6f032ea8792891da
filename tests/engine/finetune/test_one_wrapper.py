"""A Transformer has one wrapper for queries and fine-tuning (engine/models/wrappers): the network the
lens reads is the one fine-tuning trains, fed the same ids, and a model that reads left to right is
read so by both — ours and a Hugging Face folder's alike."""

import pytest
import torch

from engine import api
from engine.finetune.encoders import encoder_from_handle


def tiny_hf_folder(folder, contextual_runs, *, decoder: bool):
    """A 2-layer Hugging Face BERT on the test run's WordPiece vocabulary; ``decoder``: its config says
    is_decoder (a BERT made a left-to-right LM, as the clm-head runs are)."""
    import transformers

    from engine.data.text import load_subword_tokenizer

    tok = load_subword_tokenizer(contextual_runs["bert"][0] / "tokenizer.json")
    cfg = transformers.BertConfig(vocab_size=tok.get_vocab_size(), hidden_size=32, num_hidden_layers=2,
                                  num_attention_heads=4, intermediate_size=64, max_position_embeddings=64,
                                  is_decoder=decoder)
    torch.manual_seed(0)
    (transformers.BertLMHeadModel if decoder else transformers.BertForMaskedLM)(cfg).save_pretrained(folder)
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
                                         pad_token="[PAD]", mask_token="[MASK]").save_pretrained(folder)
    return folder


def tiny_gpt2_folder(folder, contextual_runs):
    """A 2-layer Hugging Face GPT-2 on the test GPT run's byte-level BPE (its <|endoftext|> as BOS and EOS)."""
    import transformers

    from engine.data.text import load_subword_tokenizer

    tok = load_subword_tokenizer(contextual_runs["gpt"][0] / "tokenizer.json")
    cfg = transformers.GPT2Config(vocab_size=tok.get_vocab_size(), n_embd=32, n_layer=2, n_head=4, n_positions=64,
                                  bos_token_id=tok.token_to_id("<|endoftext|>"), eos_token_id=tok.token_to_id("<|endoftext|>"))
    torch.manual_seed(0)
    transformers.GPT2LMHeadModel(cfg).save_pretrained(folder)
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                                         unk_token="<|endoftext|>").save_pretrained(folder)
    return folder


def _handles(contextual_runs, tmp_path):
    return {"bert": api.load(contextual_runs["bert"][0]), "gpt": api.load(contextual_runs["gpt"][0]),
            "hf-encoder": api.load(tiny_hf_folder(tmp_path / "enc", contextual_runs, decoder=False)),
            "hf-decoder": api.load(tiny_hf_folder(tmp_path / "dec", contextual_runs, decoder=True))}


@pytest.mark.parametrize("which", ["bert", "gpt", "hf-encoder", "hf-decoder"])
def test_fine_tuning_starts_from_the_states_the_queries_read(contextual_runs, tmp_path, which):
    handle = _handles(contextual_runs, tmp_path)[which]
    encoder = encoder_from_handle(handle)
    assert encoder.adapter is handle.adapter  # a view of the query wrapper, not a second one
    assert encoder.max_len == handle.adapter.max_len
    enc = encoder.encode("the striker scored a goal")
    ids = torch.tensor([enc.ids], device=next(encoder.network.parameters()).device)
    segments, mask = torch.tensor([enc.segments], device=ids.device), torch.ones_like(ids, dtype=torch.bool)
    encoder.eval()
    with torch.no_grad():
        tuned = encoder.states(ids, segments, mask)[0]
        queried = handle.adapter.forward(ids, segments, pad_mask=mask).hidden[-1][0]
    assert torch.allclose(tuned, queried, atol=1e-5)


@pytest.mark.parametrize("which,causal", [("bert", False), ("gpt", True), ("hf-encoder", False), ("hf-decoder", True)])
def test_a_model_that_reads_left_to_right_gives_its_last_word_as_the_sentence_vector(contextual_runs, tmp_path,
                                                                                     which, causal):
    """Its queries predict the next token, and fine-tuning reads its last real token: padding after it
    changes nothing. A model that reads both ways does neither."""
    from engine.results import Capability

    handle = _handles(contextual_runs, tmp_path)[which]
    encoder = encoder_from_handle(handle)
    assert handle.adapter.causal is causal
    assert (Capability.NEXT_TOKEN in handle.capabilities) is causal
    enc = encoder.encode("the band played a song")
    n = len(enc.ids)
    device = next(encoder.network.parameters()).device
    ids = torch.tensor([enc.ids + [0, 0, 0]], device=device)
    segments = torch.tensor([enc.segments + [0, 0, 0]], device=device)
    mask = torch.tensor([[True] * n + [False] * 3], device=device)
    encoder.eval()
    with torch.no_grad():
        states = encoder.states(ids, segments, mask)
        pooled = encoder.pooled(states, mask)[0]
    if causal:
        assert torch.allclose(pooled, states[0, n - 1], atol=1e-6)
    else:
        assert not torch.allclose(pooled, states[0, n - 1], atol=1e-3)
