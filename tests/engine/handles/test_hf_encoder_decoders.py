"""Hugging Face encoder-decoders: BART (and mBART) fill [MASK] as their denoising pre-training taught them, the
decoder rewriting the text, with transformers' probabilities; T5 as its span-corruption pre-training did, the
decoder writing out what its sentinel <extra_id_0> stands for; their sequence classifiers (BART-large-MNLI, T5's)
classify with their heads; their encoder gives vectors and attention, and the lab, which reads a model's layers
through its output head, refuses them with the reason. Before, every such folder opened as its encoder alone."""

import numpy as np
import pytest
import torch

from engine import api
from engine.errors import InputError, Unsupported
from engine.results import Capability


def _folder(path, model, tokenizer):
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def _seq2seq_tokenizer(kind):
    """A small byte-level BPE with BART's <s> … </s></s> … </s>, or a SentencePiece BPE with T5's … </s> … </s>."""
    import transformers
    from tokenizers import ByteLevelBPETokenizer, SentencePieceBPETokenizer
    from tokenizers.processors import RobertaProcessing, TemplateProcessing

    texts = ["the cat sat on the mat", "a cat is sitting", "the bank of the river", "money in the bank"] * 20
    if kind == "bart":
        bpe = ByteLevelBPETokenizer()
        bpe.train_from_iterator(texts, vocab_size=300, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
        bpe._tokenizer.post_processor = RobertaProcessing(("</s>", 2), ("<s>", 0))
        return transformers.PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, bos_token="<s>", eos_token="</s>",
                                                    cls_token="<s>", sep_token="</s>", unk_token="<unk>",
                                                    pad_token="<pad>", mask_token="<mask>")
    spm = SentencePieceBPETokenizer()
    spm.train_from_iterator(texts, vocab_size=200, special_tokens=["<pad>", "</s>", "<unk>", "<extra_id_0>",
                                                                   "<extra_id_1>"])
    spm._tokenizer.post_processor = TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>",
                                                       special_tokens=[("</s>", 1)])
    return transformers.PreTrainedTokenizerFast(tokenizer_object=spm._tokenizer, eos_token="</s>", unk_token="<unk>",
                                                pad_token="<pad>", additional_special_tokens=["<extra_id_0>",
                                                                                              "<extra_id_1>"])


@pytest.mark.parametrize("kind", ["bart", "t5"])
def test_an_encoder_decoder_classifier_classifies_with_its_head(tmp_path, kind):
    """BART-large-MNLI (the zero-shot classifier) and T5's sequence classifiers read the text with encoder and
    decoder; before, such a folder opened as its encoder alone, without its head."""
    import transformers

    tok = _seq2seq_tokenizer(kind)
    labels = {0: "contradiction", 1: "neutral", 2: "entailment"}
    common = {"vocab_size": len(tok), "num_labels": 3, "id2label": labels, "label2id": {v: k for k, v in labels.items()}}
    torch.manual_seed(0)
    if kind == "bart":
        config = transformers.BartConfig(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                                         decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                                         max_position_embeddings=64, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                                         **common)
        model = transformers.BartForSequenceClassification(config).eval()
    else:
        config = transformers.T5Config(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, pad_token_id=0,
                                       eos_token_id=1, decoder_start_token_id=0, **common)
        model = transformers.T5ForSequenceClassification(config).eval()
    h = api.load(_folder(tmp_path / kind, model, tok))
    assert Capability.CLASSIFY in h.capabilities and "contradiction, neutral, entailment" in h.info["task"]
    for a, b in (("the cat sat on the mat", None), ("the cat sat", "a cat is sitting")):
        ours = h.classify(a, b)
        with torch.no_grad():
            theirs = model(**tok(a, b, return_tensors="pt")).logits[0].softmax(-1).cpu().numpy()
        got = np.array([ours.probs[ours.labels.index(label)] for label in labels.values()])
        assert np.allclose(got, theirs, atol=1e-4)
    assert h.contextual_vectors("the cat sat").vectors.shape == (3, 3, 32)  # its encoder's layers, as before
    assert h.attention("the cat sat").tokens



def test_bart_fills_a_mask_with_transformers_probabilities_and_its_layers_are_not_lensed(tmp_path):
    import transformers

    tok = _seq2seq_tokenizer("bart")
    torch.manual_seed(1)
    config = transformers.BartConfig(vocab_size=len(tok), d_model=32, encoder_layers=2, decoder_layers=2,
                                     encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                                     decoder_ffn_dim=64, max_position_embeddings=64, pad_token_id=1, bos_token_id=0,
                                     eos_token_id=2)
    model = transformers.BartForConditionalGeneration(config).eval()
    h = api.load(_folder(tmp_path / "bart", model, tok))
    assert Capability.MASKED_LM in h.capabilities and "denoising" in h.info["note"]
    ours = h.fill_mask("the cat sat on the [MASK]", k=5)[0]
    enc = tok("the cat sat on the <mask>", return_tensors="pt")
    with torch.no_grad():
        theirs = model(**enc).logits[0, enc.input_ids[0].tolist().index(tok.mask_token_id)].softmax(-1)
    top = theirs.topk(5)
    assert list(ours.tokens) == [tok.decode([int(i)]) for i in top.indices]
    assert np.allclose(ours.probs, top.values.cpu().numpy(), atol=1e-4)
    assert h.score("the cat sat on the mat").logprob < 0  # one masked pass per token, as for any masked LM
    assert h.contextual_vectors("the cat sat").vectors.shape == (3, 3, 32)  # its encoder's layers
    for lab in (lambda: h.logit_lens("the cat sat on the [MASK]"), lambda: h.lens_grid("the cat sat on the [MASK]"),
                lambda: h.causal_trace("the cat sat on the [MASK]", "cat")):
        with pytest.raises(Unsupported, match="encoder-decoder"):
            lab()


def test_t5_fills_a_mask_through_its_sentinel_one_at_a_time(tmp_path):
    import transformers

    tok = _seq2seq_tokenizer("t5")
    torch.manual_seed(2)
    model = transformers.T5ForConditionalGeneration(transformers.T5Config(
        vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, pad_token_id=0, eos_token_id=1,
        decoder_start_token_id=0)).eval()
    h = api.load(_folder(tmp_path / "t5", model, tok))
    assert Capability.MASKED_LM in h.capabilities and "<extra_id_0>" in h.info["note"]
    ours = h.fill_mask("the cat sat on the [MASK]", k=5)[0]
    sentinel = tok.convert_tokens_to_ids("<extra_id_0>")
    with torch.no_grad():
        theirs = model(**tok("the cat sat on the <extra_id_0>", return_tensors="pt"),
                       decoder_input_ids=torch.tensor([[0, sentinel]])).logits[0, -1].softmax(-1)
    specials = tok.all_special_ids
    assert any(int(i) in specials for i in theirs.topk(5).indices), \
        "the model's top 5 hold no special token: the test would not see them listed"
    theirs[specials] = 0.0  # the end, padding and sentinels are not words: the fill lists words only
    top = theirs.topk(5)
    assert np.allclose(ours.probs, top.values.cpu().numpy(), rtol=1e-3, atol=0)
    assert [t.strip() for t in ours.tokens] == [tok.convert_ids_to_tokens(int(i)).replace("\u2581", "")
                                                for i in top.indices]
    assert h.score("the cat sat on the mat").logprob < 0  # each token in turn hidden behind the sentinel
    with pytest.raises(InputError, match="one \\[MASK\\] at a time"):
        h.fill_mask("the [MASK] sat on the [MASK]")
    with pytest.raises(Unsupported, match="encoder-decoder"):
        h.logit_lens("the cat sat on the [MASK]")


def test_a_t5_encoder_saved_alone_gives_vectors_and_attention(tmp_path):
    """T5EncoderModel (sentence-T5, a diffusion model's text encoder) saves a config that no longer says
    encoder-decoder: it was built as a whole T5, whose decoder asked for an output text on every query."""
    import transformers

    tok = _seq2seq_tokenizer("t5")
    model = transformers.T5EncoderModel(transformers.T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64,
                                                              num_layers=2, num_heads=4)).eval()
    h = api.load(_folder(tmp_path / "sentence-t5", model, tok))
    assert h.contextual_vectors("the cat sat").vectors.shape == (3, 3, 32)
    assert h.attention("the cat sat").tokens
    assert "T5EncoderModel" in h.info["note"] and Capability.MASKED_LM not in h.capabilities


@pytest.mark.parametrize("kind", ["bart", "t5"])
def test_an_encoder_decoder_folder_fine_tunes_on_its_encoder_and_classifies_after(tmp_path, kind):
    """Fine-tuning reads an encoder-decoder's encoder (a T5 folder crashed: its texts had no first special token,
    a None in every batch), and the run it leaves classifies when opened again."""
    import transformers

    from engine.api import FinetuneSpec, finetune

    tok = _seq2seq_tokenizer(kind)
    torch.manual_seed(0)
    if kind == "bart":
        model = transformers.BartForConditionalGeneration(transformers.BartConfig(
            vocab_size=len(tok), d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
            pad_token_id=1, bos_token_id=0, eos_token_id=2))
    else:
        model = transformers.T5ForConditionalGeneration(transformers.T5Config(
            vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, pad_token_id=0,
            eos_token_id=1, decoder_start_token_id=0))
    folder = _folder(tmp_path / kind, model.eval(), tok)
    task = tmp_path / "topics.tsv"
    rows = [("the cat sat on the mat", "home"), ("money in the bank", "money"), ("a cat is sitting", "home"),
            ("the bank of the river", "money")] * 10
    task.write_text("text\tlabel\n" + "".join(f"{t}\t{label}\n" for t, label in rows), encoding="utf-8")
    events = list(finetune(FinetuneSpec(model=str(folder), task=str(task), out=str(tmp_path / "run"),
                                        max_steps=2, batch_size=8, max_len=32)))
    assert events[-1].status == "completed"
    assert sorted(api.load(tmp_path / "run").classify("a cat on the mat").labels) == ["home", "money"]
