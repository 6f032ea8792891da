"""A Hugging Face model's queries run its LM head only where they read logits: vectors and attention come from the
network alone, and fill-mask and sentence scores get the head at the rows they read, with transformers' own
numbers (its whole model's, sliced)."""

import pytest
import torch

from engine.models.wrappers.hf import HFAdapter


def _tokenizer():
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"abcdefghijklmnop"])}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", cls_token="[CLS]",
                                                sep_token="[SEP]", pad_token="[PAD]", mask_token="[MASK]")


def _model(name: str):
    import transformers

    torch.manual_seed(0)
    small = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64,
             "max_position_embeddings": 32, "vocab_size": 21}
    if name == "gpt2":
        return transformers.GPT2LMHeadModel(transformers.GPT2Config(n_embd=32, n_layer=2, n_head=4, n_positions=32,
                                                                    vocab_size=21)), "causal"
    cls = {"mlm": transformers.BertForMaskedLM, "pretraining": transformers.BertForPreTraining,
           "causal-bert": transformers.BertLMHeadModel, "bare": transformers.BertModel}[name]
    config = transformers.BertConfig(**small, is_decoder=name == "causal-bert")
    return cls(config), "causal" if name in ("causal-bert",) else "masked"


@pytest.mark.parametrize("name", ["mlm", "pretraining", "causal-bert", "gpt2", "bare"])
def test_queries_give_transformers_numbers_and_run_the_head_only_for_logits(name):
    model, objective = _model(name)
    adapter = HFAdapter(model, _tokenizer(), objective, torch.device("cpu"), 32)
    ids = torch.tensor([[2, 5, 6, 4, 7, 8, 3], [2, 9, 4, 10, 11, 12, 3]])
    head_calls = []
    output = model.get_output_embeddings()
    if output is not None:
        output.register_forward_hook(lambda *_: head_calls.append(1))
    with torch.no_grad():
        ref = model(input_ids=ids, output_hidden_states=True, output_attentions=True)
        head_calls.clear()
        vectors = adapter.forward(ids, None, attention=True)
        assert not head_calls  # no vocabulary logits for a vectors or attention query
        assert len(vectors.hidden) == len(ref.hidden_states) and len(vectors.attentions) == len(ref.attentions)
        for ours, theirs in zip(vectors.hidden + vectors.attentions, ref.hidden_states + ref.attentions, strict=True):
            assert torch.allclose(ours, theirs, atol=1e-6)
        if output is None:
            return
        ref_logits = ref.prediction_logits if name == "pretraining" else ref.logits
        at = adapter.forward(ids, None, logits=True, positions=[3, 5])
        assert torch.allclose(at.logits, ref_logits[:, [3, 5]], atol=1e-5)
        rows = adapter.forward(ids, None, logits=True, row_positions=[3, 1])
        assert torch.allclose(rows.logits, ref_logits[[0, 1], [3, 1]], atol=1e-5)
        every = adapter.forward(ids, None, logits=True)
        assert torch.allclose(every.logits, ref_logits, atol=1e-5)
