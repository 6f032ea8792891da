"""Contextual handles: vectors per occurrence, attention, predictions; save/load, export to transformers,
Hugging Face folders, and bad input."""

import contextlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import api
from engine.checkpoints.reading import read_training_state
from engine.errors import CheckpointError, InputError, Unsupported, Word2BertError
from engine.results import Capability


@pytest.fixture(scope="module")
def handles(contextual_runs):
    return {kind: api.load(run_dir) for kind, (run_dir, _) in contextual_runs.items()}


def _bank(handle, sentence):
    cv = handle.contextual_vectors(sentence)
    return cv.vectors[:, [w.lower() for w in cv.words].index("piano")]


@pytest.mark.parametrize("kind", ["bert", "gpt", "elmo"])
def test_same_word_in_two_contexts_gets_two_vectors(handles, kind):
    h = handles[kind]
    a = _bank(h, "She played the piano on stage.")
    b = _bank(h, "He drove the truck past the old piano shop.")
    assert a.shape[0] == h.contextual_vectors("piano").vectors.shape[0] >= 3
    if kind == "elmo":  # ELMo's layer 0 is the char-CNN alone; BERT's and GPT's add the position
        assert np.allclose(a[0], b[0], atol=1e-5)
    assert not np.allclose(a[-1], b[-1], atol=1e-3)


def test_static_model_gives_one_vector_per_word(contextual_runs, topic_corpus, tmp_path):
    from engine.config.run_spec import RunSpec
    from engine.config.settings import Word2VecConfig

    spec = RunSpec("word2vec", out=str(tmp_path / "w"), corpus=str(topic_corpus),
                   model=Word2VecConfig(vector_size=16, min_count=1, epochs=1))
    list(api.train(spec))
    h = api.load(tmp_path / "w")
    a = h.contextual_vectors("she played the piano on stage")
    b = h.contextual_vectors("the old piano shop")
    assert a.vectors.shape[0] == 1
    assert np.array_equal(a.vectors[0, a.words.index("piano")], b.vectors[0, b.words.index("piano")])


def test_words_are_shown_as_typed_and_subwords_pooled(handles):
    cv = handles["bert"].contextual_vectors("The Xylophonist played.")
    assert cv.words == ("The", "Xylophonist", "played", ".")
    assert cv.vectors.dtype == np.float32 and cv.vectors.shape[1] == 4


@pytest.mark.parametrize("kind", ["bert", "gpt"])
def test_attention_is_probabilities_of_every_head(handles, kind):
    att = handles[kind].attention(("He drove the car.", "She played the piano."))
    layers, heads = 2, 2
    assert att.weights.shape == (layers, heads, len(att.tokens), len(att.tokens))
    assert np.allclose(att.weights.sum(-1), 1.0, atol=1e-4)
    if kind == "bert":
        assert att.tokens[0] == "[CLS]" and att.segments[-1] == 1 and att.segments[0] == 0
    else:
        assert np.allclose(np.triu(att.weights[0, 0], 1), 0.0)  # causal: no looking ahead


def test_fill_mask_next_token_score_and_next_sentence(handles):
    bert, gpt, elmo = handles["bert"], handles["gpt"], handles["elmo"]
    cands = bert.fill_mask("She played the [MASK] on stage. He drove the [MASK].", k=5)
    assert len(cands) == 2 and all(len(c.tokens) == 5 for c in cands)
    assert all(c.probs == tuple(sorted(c.probs, reverse=True)) for c in cands)
    nxt = gpt.next_token("she played the", k=3)
    assert len(nxt.tokens) == 3 and 0 < sum(nxt.probs) <= 1.0001
    assert elmo.next_token("she played the", k=3).tokens
    for h in (bert, gpt, elmo):
        s = h.score("she played the piano on stage .")
        assert s.logprob < 0 and s.perplexity > 1 and len(s.token_logprobs) == len(s.tokens)
    # ELMo scores a word it does not know as its <unk> class, and says so; GPT spells every word out
    assert elmo.score("She zqxvwy the piano .").unknown == (False, True, False, False, False, False)
    assert gpt.score("She zqxvwy the piano .").unknown == ()
    p = bert.next_sentence("He drove the car.", "She played the piano.")
    assert 0.0 <= p <= 1.0


def test_what_a_model_cannot_do_is_refused_with_a_reason(handles):
    with pytest.raises(Unsupported, match="attention"):
        handles["elmo"].attention("a sentence")
    with pytest.raises(Unsupported, match="masked"):
        handles["gpt"].fill_mask("the [MASK]")
    with pytest.raises(Unsupported):
        handles["bert"].next_token("the car")
    with pytest.raises(Unsupported):
        handles["gpt"].next_sentence("a", "b")
    assert Capability.ATTENTION not in handles["elmo"].capabilities
    assert Capability.MASKED_LM in handles["bert"].capabilities


def test_bad_input_gets_clear_messages(handles):
    bert = handles["bert"]
    with pytest.raises(InputError, match="no \\[MASK\\]"):
        bert.fill_mask("no mask here")
    for h in handles.values():
        with pytest.raises(InputError, match="empty"):
            h.contextual_vectors("   ")
    long = " ".join(["the"] * 400)  # one token per word
    cv = bert.contextual_vectors(long)
    assert "truncated" in cv.notice and cv.vectors.shape[1] == 62  # 64 positions minus [CLS] and [SEP]
    att = bert.attention(long)
    assert "truncated" in att.notice and att.weights.shape[-1] == 64 and att.tokens[-1] == "[SEP]"
    for k in (None, float("nan"), float("inf"), 0, -3, True, "5", 10**9):  # k from a script or a scene
        with pytest.raises(InputError, match="whole number from 1"):
            bert.fill_mask("the [MASK] sat", k=k)
        with pytest.raises(InputError, match="whole number from 1"):
            handles["gpt"].next_token("the cat", k=k)
    assert bert.fill_mask("the \udee6 [MASK] sat", k=np.int64(3))[0].tokens  # a lone surrogate is read as U+FFFD
    assert handles["elmo"].contextual_vectors("a \ud800 b").vectors.shape[1] == 3


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.one_of(st.characters(), st.sampled_from(["\ud800", "\udee6", "\udfff"])), max_size=80))
def test_arbitrary_text_gives_a_result_or_a_clear_error(handles, text):  # lone surrogates included
    for h in handles.values():
        for method, args in (("contextual_vectors", ()), ("score", ()), ("fill_mask", (3,)), ("attention", ()),
                             ("next_token", (3,))):
            with contextlib.suppress(Word2BertError):
                getattr(h, method)(text, *args)


@pytest.mark.parametrize("kind", ["bert", "gpt", "elmo"])
def test_save_then_load_gives_the_trained_models_outputs(contextual_runs, handles, kind):
    """The weights in model.safetensors equal those in the resume state, and load -> same outputs."""
    run_dir, _ = contextual_runs[kind]
    state = read_training_state(run_dir)["model"]
    handle = handles[kind]
    net = handle.adapter.model if kind != "elmo" else handle.model
    for name, value in net.state_dict().items():
        assert torch.equal(value.cpu(), state[name].float()), name
    again = api.load(run_dir)
    s = "She played the piano on stage."
    assert np.array_equal(handle.contextual_vectors(s).vectors, again.contextual_vectors(s).vectors)


def test_wrong_shapes_are_refused_with_the_names(contextual_runs, tmp_path):
    import shutil

    run_dir, _ = contextual_runs["bert"]
    bad = tmp_path / "bad"
    shutil.copytree(run_dir, bad, ignore=shutil.ignore_patterns("checkpoints"))
    config = json.loads((bad / "config.json").read_text())
    config["model"]["hidden"] = 32
    (bad / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="wrong shape: .*token_emb.weight"):
        api.load(bad)


@pytest.mark.parametrize("kind", ["bert", "gpt"])
def test_export_to_transformers_gives_identical_logits(contextual_runs, handles, kind, tmp_path):
    import transformers

    from engine.cli.export import export_hf

    run_dir, _ = contextual_runs[kind]
    out = export_hf(run_dir, tmp_path / "hf")
    cls = transformers.BertForPreTraining if kind == "bert" else transformers.GPT2LMHeadModel
    theirs = cls.from_pretrained(out).eval()
    ids = torch.tensor([[2, 40, 41, 42, 3, 43, 44, 3]]) if kind == "bert" else torch.tensor([[0, 40, 41, 42, 43]])
    segments = torch.tensor([[0, 0, 0, 0, 0, 1, 1, 1]]) if kind == "bert" else None
    adapter = handles[kind].adapter  # on the GPU where there is one; theirs on the CPU
    with torch.no_grad():
        ours = adapter.forward(ids.to(adapter.device), None if segments is None else segments.to(adapter.device),
                               logits=True, nsp=True)
        kwargs = {"token_type_ids": segments} if kind == "bert" else {}
        ref = theirs(input_ids=ids, **kwargs)
    ref_logits = ref.prediction_logits if kind == "bert" else ref.logits
    assert torch.allclose(ours.logits.float().cpu(), ref_logits, atol=1e-4)
    if kind == "bert":
        assert torch.allclose(ours.nsp.float().cpu(), ref.seq_relationship_logits, atol=1e-4)
    # and the exported folder loads back through api.load as a Hugging Face checkpoint
    again = api.load(out)
    assert again.kind.startswith("hf-")
    s = "She played the piano."
    assert np.allclose(again.contextual_vectors(s).vectors[-1], handles[kind].contextual_vectors(s).vectors[-1], atol=1e-4)


def test_a_tiny_hugging_face_model_from_a_config_loads(tmp_path, contextual_runs):
    import transformers

    from engine.data.text import load_subword_tokenizer

    tok = load_subword_tokenizer(contextual_runs["bert"][0] / "tokenizer.json")
    cfg = transformers.BertConfig(vocab_size=tok.get_vocab_size(), hidden_size=32, num_hidden_layers=3,
                                  num_attention_heads=4, intermediate_size=64, max_position_embeddings=64)
    transformers.BertForMaskedLM(cfg).save_pretrained(tmp_path / "hf")
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
                                         pad_token="[PAD]", mask_token="[MASK]").save_pretrained(tmp_path / "hf")
    h = api.load(tmp_path / "hf")
    att = h.attention("she played the piano")
    assert att.weights.shape == (3, 4, len(att.tokens), len(att.tokens))
    assert len(h.fill_mask("she played the [MASK]", 4)[0].tokens) == 4
    assert h.contextual_vectors("she played the piano").vectors.shape == (4, 4, 32)


def _hf_folder(folder, model, tok):
    import transformers

    model.save_pretrained(folder)
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
                                         pad_token="[PAD]", mask_token="[MASK]").save_pretrained(folder)
    return folder


@pytest.mark.parametrize("kind", ["electra-discriminator", "t5", "sentence-classifier", "xlnet"])
def test_a_hugging_face_model_without_a_word_head_gives_vectors_and_says_what_it_is(tmp_path, contextual_runs, kind):
    """An ELECTRA discriminator (a head that tells replaced tokens, no words), an encoder-decoder (T5), a
    fine-tuned regression head (one score: no classifier, test_hf_tasks.py has those) and XLNet (filed as a causal LM, but each position sees the whole text unless a
    permutation mask is built): vectors and attention from their encoders, and a refusal that names what the
    checkpoint is. Before, the discriminator claimed fill-mask and crashed in it, T5's vectors raised transformers'
    "You must specify exactly one of input_ids or inputs_embeds", and XLNet (max_position_embeddings -1) read no
    token at all."""
    import transformers

    from engine.data.text import load_subword_tokenizer

    tok = load_subword_tokenizer(contextual_runs["bert"][0] / "tokenizer.json")
    v = tok.get_vocab_size()
    small = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64}
    model, what = {
        "electra-discriminator": (lambda: transformers.ElectraForPreTraining(
            transformers.ElectraConfig(vocab_size=v, embedding_size=16, **small)), "replaced"),
        "t5": (lambda: transformers.T5Model(transformers.T5Config(vocab_size=v, d_model=32, d_kv=8, d_ff=64,
                                                                   num_layers=2, num_heads=4)), "encoder-decoder"),
        "sentence-classifier": (lambda: transformers.BertForSequenceClassification(
            transformers.BertConfig(vocab_size=v, num_labels=1, **small)), "BertForSequenceClassification"),
        "xlnet": (lambda: transformers.XLNetLMHeadModel(transformers.XLNetConfig(vocab_size=v, d_model=32, n_layer=2,
                                                                                n_head=4, d_inner=64)), "whole text"),
    }[kind]
    h = api.load(_hf_folder(tmp_path / kind, model(), tok))
    assert h.capabilities & (Capability.MASKED_LM | Capability.SENTENCE_SCORE | Capability.NEXT_TOKEN) == Capability(0)
    cv = h.contextual_vectors("she played the piano")
    assert cv.vectors.shape == (3, 4, 32) and np.isfinite(cv.vectors).all()
    att = h.attention("she played the piano")
    assert att.weights.shape[:2] == (2, 4)
    for query in (lambda: h.fill_mask("she played the [MASK]"), lambda: h.score("she played the piano")):
        with pytest.raises(Unsupported, match=what):
            query()


def test_a_typed_mask_is_the_models_own_mask_token_in_attention_as_in_fill_mask(tmp_path):
    """RoBERTa's mask token is "<mask>": a [MASK] typed in the attention view was read as the characters "[", "M",
    …, so the view's tokens did not line up with fill-mask's positions (the Masked LM view opens the head view at its
    [MASK]) and the two queries could not share their pass."""
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    vocab = {t: i for i, t in enumerate(["<pad>", "<unk>", "<s>", "</s>", "<mask>", "she", "played", "the", "piano",
                                         "."])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
                                                       special_tokens=[("<s>", 2), ("</s>", 3)])
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                                cls_token="<s>", sep_token="</s>", unk_token="<unk>",
                                                pad_token="<pad>", mask_token="<mask>")
    model = transformers.RobertaForMaskedLM(transformers.RobertaConfig(
        vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
        max_position_embeddings=40, pad_token_id=0))
    model.save_pretrained(tmp_path / "roberta")
    fast.save_pretrained(tmp_path / "roberta")
    h = api.load(tmp_path / "roberta")
    [candidates] = h.fill_mask("she played the [MASK] .", 3)
    att = h.attention("she played the [MASK] .")
    assert att.tokens == ("<s>", "she", "played", "the", "<mask>", ".", "</s>")
    assert att.tokens[candidates.position] == "<mask>"


def test_sentencepiece_tokens_read_as_text(tmp_path):
    """A Llama-style vocabulary marks a word's start with "▁": tokens show it as a space (as byte-level BPE's
    do), and a continuation is text — before, candidates read "▁the" and a generated continuation
    " ▁Old ander ▁un" (pieces joined WordPiece's way, with spaces)."""
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    pieces = ["<unk>", "<s>", "</s>", "\u2581she", "\u2581played", "\u2581the", "\u2581pian", "o"]
    tok = Tokenizer(models.Unigram([(p, -1.0 if p.startswith("\u2581") else -2.0) for p in pieces], unk_id=0))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                                unk_token="<unk>")
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=len(pieces), hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=64, bos_token_id=1, eos_token_id=2)).save_pretrained(tmp_path / "llama")
    fast.save_pretrained(tmp_path / "llama")
    h = api.load(tmp_path / "llama")
    assert h.attention("she played the piano").tokens == ("<s>", " she", " played", " the", " pian", "o")
    assert h.score("she played the piano").tokens == (" she", " played", " the", " pian", "o")  # after <s>
    assert not any("\u2581" in t for t in h.next_token("she played the", 5).tokens)
    text = h.generate("she played", tokens=6, temperature=1.0)
    assert text and "\u2581" not in text and "  " not in text  # six pieces, each a word's start or its continuation


def test_a_funnel_transformer_is_refused_with_the_reason(tmp_path, contextual_runs):
    """Its blocks pool the tokens, so its layers have fewer vectors than the text has tokens: refused when opened,
    not a stack error in every view."""
    import transformers

    from engine.data.text import load_subword_tokenizer

    tok = load_subword_tokenizer(contextual_runs["bert"][0] / "tokenizer.json")
    model = transformers.FunnelForPreTraining(transformers.FunnelConfig(
        vocab_size=tok.get_vocab_size(), d_model=32, n_head=4, d_head=8, d_inner=64, block_sizes=[1, 1]))
    with pytest.raises(CheckpointError, match="pools its tokens"):
        api.load(_hf_folder(tmp_path / "funnel", model, tok))


def test_minilm_package_gives_attention_and_explains_its_missing_head():
    h = api.load("all-minilm-l6-v2")
    att = h.attention("We sat on the bank of the river.")
    assert att.weights.shape[:2] == (6, 12) and att.tokens[0] == "[CLS]"
    cv = h.contextual_vectors("We sat on the bank of the river.")
    assert cv.vectors.shape == (7, 9, 384)
    with pytest.raises(Unsupported, match="no masked-LM head"):
        h.fill_mask("We sat on the [MASK] of the river.")


def test_pickle_only_hugging_face_folder_is_refused(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    with pytest.raises(CheckpointError):
        api.load(tmp_path)


def test_ddp_with_two_gloo_processes_writes_one_run(topic_corpus, tmp_path):
    out = tmp_path / "ddp"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", "29533",
           "-m", "engine.cli", "gpt", "--corpus", str(topic_corpus), "--out", str(out), "--max-steps", "6",
           "--hidden", "32", "--layers", "1", "--heads", "2", "--intermediate", "64", "--seq-len", "16",
           "--max-len", "32", "--vocab-size", "200", "--batch-size", "8", "--eval-every", "0", "--keep-every", "0",
           "--log-every", "2", "--device", "cpu"]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    config = json.loads((out / "config.json").read_text())
    assert config["trained_steps"] == 6
    events = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    started = [e for e in events if e["event"] == "started"]
    assert len(started) == 1 and started[0]["info"]["processes"] == 2
    assert events[-1]["event"] == "finished" and events[-1]["status"] == "completed"
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "config.json", "metrics.jsonl", "model.safetensors", "tokenizer.json", "training_state.pt"]


@pytest.mark.parametrize("kind", ["bert", "gpt"])
def test_batched_vectors_equal_one_sentence_at_a_time(handles, kind):
    h = handles[kind]
    sentences = ["She played the piano.", "He drove the old truck to town and parked it outside.", "Piano!"]
    batch = h.contextual_vectors_batch(sentences)
    for s, cv in zip(sentences, batch, strict=True):
        single = h.contextual_vectors(s)
        assert cv.words == single.words
        assert np.allclose(cv.vectors, single.vectors, atol=1e-4)


def test_pseudo_log_likelihood_is_the_same_in_chunks_of_any_size(handles, monkeypatch):
    import engine.handles.transformer as transformer

    sentence = "the piano sat on the stage and the cat played it loudly ."
    whole = handles["bert"].score(sentence)
    monkeypatch.setattr(transformer, "PLL_BUDGET_BYTES", 1)  # one masked copy at a time
    one_by_one = handles["bert"].score(sentence)
    assert whole.tokens == one_by_one.tokens and len(whole.token_logprobs) > 5
    assert np.allclose(whole.token_logprobs, one_by_one.token_logprobs, atol=1e-4)


def test_fill_mask_and_attention_on_one_text_share_one_forward_pass(handles, monkeypatch):
    bert = handles["bert"]
    calls = []
    forward = bert.adapter.forward
    monkeypatch.setattr(bert.adapter, "forward", lambda *a, **kw: calls.append(kw) or forward(*a, **kw))
    text = "the pianist played the [MASK] on stage ."
    filled = bert.fill_mask(text, k=5)
    maps = bert.attention(text)  # the attention view, one keystroke later: no second pass
    assert len(calls) == 1 and calls[0]["attention"] and calls[0]["logits"]
    assert np.allclose(maps.weights.sum(-1), 1, atol=1e-4) and filled[0].tokens
    bert.fill_mask(text.replace("stage", "tour"), k=5)  # another text: a new pass
    assert len(calls) == 2


def test_pseudo_log_likelihood_stops_between_chunks_when_cancelled(handles, monkeypatch):
    import threading

    import engine.handles.transformer as transformer

    monkeypatch.setattr(transformer, "PLL_BUDGET_BYTES", 1)  # one masked copy per chunk
    stop = threading.Event()
    calls = []
    forward = handles["bert"].adapter.forward

    def counted(*a, **kw):
        calls.append(1)
        if len(calls) == 3:
            stop.set()  # Stop pressed while the third chunk runs
        return forward(*a, **kw)

    monkeypatch.setattr(handles["bert"].adapter, "forward", counted)
    with api.cancellable(stop), pytest.raises(api.Cancelled, match="scoring the sentence was cancelled"):
        handles["bert"].score("the piano sat on the stage and the cat played it loudly .")
    assert len(calls) == 3  # it stopped at the next chunk, not after all of them
    assert handles["bert"].score("the cat sat .").tokens  # outside the block nothing is cancelled


def test_a_masked_lm_scores_at_most_pll_max_tokens_and_says_so(handles, monkeypatch):
    import engine.handles.transformer as transformer

    text = "the cat sat on the mat and the dog sat on the rug ."
    whole = handles["bert"].score(text)
    head = handles["bert"].score(text.rsplit(" ", 3)[0])  # the text without its last three words
    assert not whole.notice and len(head.tokens) < len(whole.tokens)
    monkeypatch.setattr(transformer, "PLL_MAX_TOKENS", len(head.tokens))
    capped = handles["bert"].score(text)
    assert f"its first {len(head.tokens)} of {len(whole.tokens)} tokens" in capped.notice
    assert capped.tokens == head.tokens  # scored as a text of its own: the same as the shorter text
    assert np.allclose(capped.token_logprobs, head.token_logprobs, atol=1e-4)


def test_a_bigger_masked_lm_scores_fewer_tokens_on_a_cpu(contextual_runs, monkeypatch):
    """A sentence score's work grows as tokens² × weights: on a CPU a big model reads fewer tokens (never
    fewer than PLL_MIN_TOKENS), so that a long text is scored in seconds, not minutes. (On a GPU every
    model reads PLL_MAX_TOKENS: the model here is pinned to the CPU.)"""
    import engine.handles.transformer as transformer
    from engine.device import DEVICE_ENV

    monkeypatch.setenv(DEVICE_ENV, "cpu")
    bert = api.load(contextual_runs["bert"][0])
    assert bert.adapter.device.type == "cpu"
    text = " ".join(["the cat sat on the mat ."] * 8)  # ~56 word tokens
    assert bert._pll_cap() == transformer.PLL_MAX_TOKENS  # a tiny model reads the most
    monkeypatch.setattr(bert, "_n_parameters", 10**9)  # a model too big for even PLL_MIN_TOKENS' budget
    assert bert._pll_cap() == transformer.PLL_MIN_TOKENS
    capped = bert.score(text)
    assert len(capped.tokens) == transformer.PLL_MIN_TOKENS
    assert f"its first {transformer.PLL_MIN_TOKENS} of" in capped.notice


def test_elmo_next_token_reads_the_last_words_of_a_long_text(handles):
    elmo = handles["elmo"]
    short = elmo.next_token("she played the", k=5)
    with torch.inference_mode():
        fwd, _ = elmo.model.log_probs(elmo._chars(["she", "played", "the"]))
    assert np.allclose(short.probs, fwd[-2].exp().topk(5).values.float().cpu().numpy(), atol=1e-5)  # as every position
    long = elmo.next_token(" ".join(["the cat sat on the mat ."] * 600) + " she played the", k=5)
    assert long.tokens and long.context.endswith("she played the")  # the end of the text, not its first words
    from engine.handles.elmo import NEXT_TOKEN_WORDS

    tail = " ".join((" ".join(["the cat sat on the mat ."] * 600) + " she played the").split()[-NEXT_TOKEN_WORDS:])
    assert elmo.next_token(tail, k=5).tokens == long.tokens


def test_a_mask_typed_in_small_letters_is_named_in_the_refusal():
    """"[mask]" is a word to a model (its tokenizer's [MASK] is in capitals): the refusal says so, not only that
    the text has none."""
    for name in ("elmo-tiny", "bert-tiny"):
        with pytest.raises(api.InputError, match=r"“\[Mask\]” is read as a word: \[MASK\] is typed in capitals"):
            api.load(name).fill_mask("the [Mask] is here")
        with pytest.raises(api.InputError) as plain:
            api.load(name).fill_mask("the cat is here")
        assert "read as a word" not in str(plain.value)
