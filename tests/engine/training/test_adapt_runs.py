"""A masked-LM head for a foreign encoder (all-MiniLM-L6-v2 ships without one): trained here, saved as
only what learned, loaded by name, and it fills [MASK]."""

import contextlib
import json

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import api
from engine.config.run_spec import RunSpec
from engine.config.settings import model_config


def three_steps(kind: str, out, corpus, train_layers: int) -> tuple:
    """A tiny adaptation of all-MiniLM-L6-v2 (3 steps of 4 windows of 24 tokens): its folder and events."""
    cfg = model_config(kind, train_layers=train_layers, seq_len=24, batch_size=4, eval_every=0, warmup=1, lr=1e-3)
    events = list(api.train(RunSpec(kind, out=str(out), corpus=str(corpus), model=cfg, max_steps=3, log_every=1)))
    return out, events


@pytest.fixture(scope="module")
def adapted(topic_corpus, tmp_path_factory):
    return three_steps("mlm-head", tmp_path_factory.mktemp("adapt") / "minilm-head", topic_corpus, 1)


def test_the_run_completes_and_reports_top10(adapted):
    _, events = adapted
    assert events[-1].status == "completed"
    evals = [e for e in events if isinstance(e, api.EvalMetrics)]
    assert evals and {"mlm_loss", "mlm_accuracy", "mlm_top10"} <= set(evals[-1].metrics)


def test_only_what_learned_is_saved_and_the_rest_comes_from_the_base(adapted):
    from safetensors.torch import load_file

    from engine.models.masked_lm_head import build

    out, _ = adapted
    saved = load_file(str(out / "model.safetensors"))
    assert any(k.startswith("cls.predictions.transform") for k in saved)
    assert all(k.startswith("cls.") or ".layer.5." in k for k in saved)  # the head and the top layer only
    handle = api.load(out)
    base, _ = build("all-minilm-l6-v2")
    loaded = handle.adapter.model.state_dict()
    frozen = "bert.encoder.layer.0.attention.self.query.weight"
    assert torch.equal(loaded[frozen], base.state_dict()[frozen])  # untouched layers are the base's
    top = "bert.encoder.layer.5.output.dense.weight"
    assert torch.allclose(loaded[top], saved[top].float()) and not torch.equal(loaded[top], base.state_dict()[top])


@pytest.mark.parametrize("which", ["adapted", "made_causal"])
def test_a_run_loads_to_the_weights_the_slow_build_gives(which, request):
    """A run loads without initialising the weights it overwrites (build_to_load): every weight, the head's
    included, is what building the network afresh and putting the run's weights in gives."""
    from engine.checkpoints.reading import read_config, read_tensors
    from engine.errors import CheckpointError
    from engine.models.masked_lm_head import build, build_to_load, load_trained

    out = request.getfixturevalue(which)[0]
    causal = which == "made_causal"
    tensors = read_tensors(out, read_config(out))
    slow, _ = build("all-minilm-l6-v2", causal=causal)
    load_trained(slow, tensors, "slow")
    fast, tokenizer, fresh = build_to_load("all-minilm-l6-v2", causal=causal)
    assert fresh and all(k.startswith("cls.") for k in fresh)  # the head, which the base does not hold
    load_trained(fast, tensors, "fast", fresh)
    expected, got = slow.state_dict(), fast.state_dict()
    assert sorted(got) == sorted(expected)
    assert [k for k in expected if not torch.equal(got[k], expected[k])] == []
    assert (tokenizer.bos_token == tokenizer.cls_token) if causal else tokenizer.bos_token is None
    lacking = {k: v for k, v in tensors.items() if k != sorted(fresh)[0]}
    with pytest.raises(CheckpointError, match="lack the head's"):  # never a head left as random numbers
        load_trained(build_to_load("all-minilm-l6-v2", causal=causal)[0], lacking, "a run without its head", fresh)


def test_the_adapted_encoder_fills_masks_and_says_what_it_is(adapted):
    out, _ = adapted
    handle = api.load(out)
    assert api.Capability.MASKED_LM in handle.capabilities
    candidates = handle.fill_mask("She deposited the money at the [MASK].", k=5)
    assert len(candidates) == 1 and len(candidates[0].tokens) == 5
    assert abs(sum(candidates[0].probs)) <= 1.0 + 1e-6
    assert "all-minilm-l6-v2" in handle.info["description"] and "masked-LM head" in handle.info["description"]


def test_whole_word_masking_masks_every_piece_of_a_chosen_word():
    from engine.models.masking import IGNORE, mask_words

    # ids: [CLS] a ##b ##c d ##e f [SEP]; 10 is [MASK]; pieces 2, 3, 5 are continuations
    ids = torch.tensor([[1, 4, 2, 3, 6, 5, 7, 9]] * 400)
    continuation = torch.zeros(12, dtype=torch.bool)
    continuation[[2, 3, 5]] = True
    special = (ids == 1) | (ids == 9)
    gen = torch.Generator().manual_seed(0)
    _, labels = mask_words(ids, special, continuation, torch.tensor([4, 6, 7]), mask_id=10, prob=0.3,
                           generator=gen)
    chosen = (labels != IGNORE).cpu().numpy()
    assert not chosen[:, 0].any() and not chosen[:, -1].any()
    assert np.array_equal(chosen[:, 1], chosen[:, 2]) and np.array_equal(chosen[:, 1], chosen[:, 3])  # a ##b ##c
    assert np.array_equal(chosen[:, 4], chosen[:, 5])  # d ##e
    assert 0.2 < chosen[:, 1].mean() < 0.4 and 0.2 < chosen[:, 6].mean() < 0.4
    _, by_piece = mask_words(ids, special, continuation, torch.tensor([4, 6, 7]), mask_id=10, prob=0.3,
                             whole_word=False, generator=gen)
    pieces = (by_piece != IGNORE).cpu().numpy()
    assert not np.array_equal(pieces[:, 1], pieces[:, 2])  # without whole words, pieces are drawn apart


def test_sentence_windows_start_at_a_sentence_and_never_cut_one_between_windows():
    from engine.training.adapt_runs import mlm_sentence_windows

    # two documents; ids 1 [CLS], 2 [SEP], 0 [PAD]; a window holds 6 tokens of text at seq_len 8
    docs = [[np.array([10, 11, 12]), np.array([13, 14]), np.array([15, 16, 17])],
            [np.array([20, 21, 22, 23, 24, 25, 26, 27, 28])]]
    windows = mlm_sentence_windows(docs, 8, cls=1, sep=2, pad=0)
    assert windows.tolist() == [[1, 10, 11, 12, 13, 14, 2, 0],  # two whole sentences, padded
                                [1, 15, 16, 17, 2, 0, 0, 0],  # the third would not fit beside them
                                [1, 20, 21, 22, 23, 24, 25, 2]]  # a sentence longer than a window is cut
    one = mlm_sentence_windows(docs, 8, cls=1, sep=2, pad=0, one=True)  # windows "sentence": one each
    assert one.tolist() == [[1, 10, 11, 12, 2, 0, 0, 0], [1, 13, 14, 2, 0, 0, 0, 0], [1, 15, 16, 17, 2, 0, 0, 0],
                            [1, 20, 21, 22, 23, 24, 25, 2]]


def test_a_batch_loses_the_columns_that_are_padding_in_every_row():
    from engine.training.adapt_runs import trim_padding

    ids = torch.tensor([[1, 10, 11, 2, 0, 0], [1, 12, 2, 0, 0, 0]])
    assert trim_padding(ids, 0).tolist() == [[1, 10, 11, 2], [1, 12, 2, 0]]
    assert trim_padding(ids[:, :4], None).shape == (2, 4)  # a tokenizer without [PAD]: nothing to trim


def _train_two_steps_seeing_batches(monkeypatch, corpus, out, windows):
    """Two steps of a 1-layer mlm-head run; every batch the masked-LM loss was given: (ids, attention, labels)."""
    from engine.models import masked_lm_head

    seen = []
    real = masked_lm_head.masked_lm_loss

    def spy(model, ids, attention, labels, *rest):
        seen.append((ids.clone(), attention.clone(), labels.clone()))
        return real(model, ids, attention, labels, *rest)

    monkeypatch.setattr(masked_lm_head, "masked_lm_loss", spy)
    cfg = model_config("mlm-head", train_layers=1, seq_len=48, batch_size=4, eval_every=0, warmup=1, lr=1e-3,
                       windows=windows)
    events = list(api.train(RunSpec("mlm-head", out=str(out), corpus=str(corpus), model=cfg, max_steps=2,
                                    log_every=1)))
    return events, seen


def test_a_sentence_windowed_adaptation_masks_and_attends_to_text_only(topic_corpus, tmp_path, monkeypatch):
    events, seen = _train_two_steps_seeing_batches(monkeypatch, topic_corpus, tmp_path / "sent", "sentences")
    assert events[-1].status == "completed"
    assert json.loads((tmp_path / "sent" / "config.json").read_text())["model"]["windows"] == "sentences"
    ids, attention, labels = seen[0]
    padded = ids == 0  # [PAD]
    assert padded.any() and (ids[:, 0] == 101).all()  # every window starts with [CLS] and most end in padding
    assert torch.equal(attention.bool(), ~padded) and not (labels[padded] != -100).any()
    started = events[0]  # the tokens a run reports are text, not padding
    assert isinstance(started, api.RunStarted) and started.unit == "tokens"
    assert 2 * 4 * 0.2 * 48 < started.total < 2 * 4 * 48
    from engine.handles.history import tokens_seen  # ... and so does the run history's scrubber

    assert tokens_seen(tmp_path / "sent") == pytest.approx(started.total, rel=0.01)


def test_a_one_sentence_adaptation_reads_a_sentence_per_window_without_padding_columns(topic_corpus, tmp_path,
                                                                                       monkeypatch):
    events, seen = _train_two_steps_seeing_batches(monkeypatch, topic_corpus, tmp_path / "one", "sentence")
    assert events[-1].status == "completed"
    for ids, _, _ in seen:
        assert ((ids == 102).sum(1) == 1).all()  # one [SEP]: one sentence in each window
        assert (ids[:, -1] != 0).any()  # the batch ends where its longest sentence does
        assert ids.shape[1] < 48


def test_a_bad_base_is_refused_before_training(topic_corpus, tmp_path):
    cfg = model_config("mlm-head", base=str(tmp_path / "nowhere"))
    with pytest.raises(api.CheckpointError, match="neither a built-in name"):
        list(api.train(RunSpec("mlm-head", out=str(tmp_path / "x"), corpus=str(topic_corpus), model=cfg, max_steps=1)))


def test_a_longer_adaptation_starts_from_an_earlier_runs_head(adapted, topic_corpus, tmp_path):
    from safetensors.torch import load_file

    from engine.models.masked_lm_head import build, load_trained

    earlier, _ = adapted
    out = tmp_path / "more-layers"
    cfg = model_config("mlm-head", train_layers=2, seq_len=24, batch_size=4, eval_every=0, warmup=1, lr=1e-12,
                       init_from=str(earlier))
    events = list(api.train(RunSpec("mlm-head", out=str(out), corpus=str(topic_corpus), model=cfg, max_steps=1)))
    assert events[-1].status == "completed"
    config = json.loads((out / "config.json").read_text())
    assert config["init_from"] == str(earlier) and config["init_from_steps"] == 3
    events = list(api.train(RunSpec("mlm-head", out=str(out), corpus=str(topic_corpus), model=cfg, max_steps=2,
                                    resume=True)))
    assert events[-1].status == "completed"
    config = json.loads((out / "config.json").read_text())  # a resume keeps where the run started from
    assert config["trained_steps"] == 2 and config["init_from_steps"] == 3 and config["init_from"] == str(earlier)
    saved, before = load_file(str(out / "model.safetensors")), load_file(str(earlier / "model.safetensors"))
    assert any(".layer.4." in k for k in saved)  # now two layers learn
    head = "cls.predictions.transform.dense.weight"
    assert torch.allclose(saved[head].float(), before[head].float())  # lr ~0: still the earlier run's head
    model, _ = build("all-minilm-l6-v2")
    with pytest.raises(api.CheckpointError, match="do not fit"):
        load_trained(model, {"cls.predictions.transform.dense.weight": torch.zeros(3, 3)}, "x")


def test_init_from_a_run_that_trained_more_layers_is_refused(adapted, topic_corpus, tmp_path):
    earlier, _ = adapted  # trained its top layer: a run with the head alone would lose it when loaded
    cfg = model_config("mlm-head", train_layers=0, init_from=str(earlier), seq_len=24, batch_size=4)
    with pytest.raises(api.CheckpointError, match="trained its top 1 layers.*--train-layers 1 or more"):
        list(api.train(RunSpec("mlm-head", out=str(tmp_path / "x"), corpus=str(topic_corpus), model=cfg, max_steps=1)))


def test_init_from_must_be_an_mlm_head_run_of_the_same_base(topic_corpus, tmp_path):
    cfg = model_config("mlm-head", init_from=str(tmp_path / "nowhere"), seq_len=24, batch_size=4)
    with pytest.raises(api.CheckpointError, match="no run folder"):
        list(api.train(RunSpec("mlm-head", out=str(tmp_path / "x"), corpus=str(topic_corpus), model=cfg, max_steps=1)))


@pytest.fixture(scope="module")
def made_causal(topic_corpus, tmp_path_factory):
    return three_steps("clm-head", tmp_path_factory.mktemp("causal") / "minilm-gpt", topic_corpus, 2)


def test_an_encoder_made_causal_trains_and_reports_perplexity(made_causal):
    out, events = made_causal
    assert events[-1].status == "completed"
    evals = [e for e in events if isinstance(e, api.EvalMetrics)]
    assert evals and {"loss", "perplexity", "accuracy"} <= set(evals[-1].metrics)
    config = json.loads((out / "config.json").read_text())
    assert config["kind"] == "clm-head" and config["base"] == "all-minilm-l6-v2"


def test_the_causal_model_sees_no_later_word_and_continues_text(made_causal):
    out, _ = made_causal
    handle = api.load(out)
    assert api.Capability.NEXT_TOKEN in handle.capabilities and api.Capability.MASKED_LM not in handle.capabilities
    a = handle.contextual_vectors("the river bank was flooded")
    b = handle.contextual_vectors("the river bank was dry")
    assert np.allclose(a.vectors[:, :3], b.vectors[:, :3], atol=1e-5)  # "the river bank" never sees what follows
    assert not np.allclose(a.vectors[-1, 4], b.vectors[-1, 4], atol=1e-3)
    nxt = handle.next_token("She deposited the money at the", k=5)
    assert len(nxt.tokens) == 5 and 0 < sum(nxt.probs) <= 1 + 1e-6
    score = handle.score("She deposited the money at the bank.")
    assert len(score.token_logprobs) == len(score.tokens) and all(lp <= 0 for lp in score.token_logprobs)
    assert "left-to-right" in handle.info["description"]


def test_the_causal_model_goes_on_after_the_cls_that_starts_each_sentence(made_causal, monkeypatch):
    """It read every sentence after a [CLS]: written as a space between sentences, not as "[CLS]"; the other
    special tokens stand for no text and are never written; WordPiece is joined as text is written."""
    from engine.models.wrappers.protocol import ForwardOutput

    out, _ = made_causal
    handle = api.load(out)
    tok = handle.adapter.tokenizer
    ids = [tok.token_to_id(t) for t in ("end", "of", "the", "day", ".", "[CLS]", "[UNK]", "she", "'", "s", "here")]
    script = iter(ids)
    unk = tok.token_to_id("[UNK]")

    def forward(window, *args, **kwargs):
        chosen = next(script)
        logits = torch.full((1, 1, tok.get_vocab_size()), -10.0)
        logits[0, 0, chosen] = 10.0
        if chosen == unk:
            logits[0, 0, next(script)] = 5.0  # what is written where [UNK] is likeliest: the next likeliest
        return ForwardOutput([], [], logits, None)

    monkeypatch.setattr(handle, "_forward", forward)
    assert handle.generate("She deposited the money at the", tokens=10) == " end of the day. she's here"


def test_the_causal_logit_lens_top_layer_is_the_models_own_prediction(made_causal):
    out, _ = made_causal
    handle = api.load(out)
    lens = handle.logit_lens("She deposited the money at the", k=3)
    nxt = handle.next_token("She deposited the money at the", k=3)
    assert len(lens.layers) == 7  # the embeddings and six layers
    assert lens.layers[-1].tokens == nxt.tokens


@pytest.fixture(scope="module")
def causal_handle(made_causal):
    return api.load(made_causal[0])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.lists(st.one_of(st.characters(), st.sampled_from(["\ud800", "\udee6", " [CLS] ", " [MASK] ", " bank "])),
                      max_size=60).map("".join))
def test_the_causal_model_takes_any_text(causal_handle, text):  # lone surrogates and special tokens included
    for method, args in (("contextual_vectors", ()), ("score", ()), ("next_token", (3,)), ("attention", ()),
                         ("logit_lens", (3,)), ("fill_mask", (3,))):
        with contextlib.suppress(api.Word2BertError):
            getattr(causal_handle, method)(text, *args)


def test_unlikelihood_pushes_down_the_words_the_window_shows_but_never_the_answer():
    """The loss against copying (mlm-head --unlikelihood): -log(1 - p) summed over the tokens a masked
    position's window shows, its answer and the tokens no window shows left alone."""
    from engine.models.masked_lm_head import copy_unlikelihood

    ids = torch.tensor([[1, 2, 3, 0], [4, 4, 2, 0]])  # two windows; token 0 stands for [MASK] (not shown)
    seen = ids != 0
    logits = torch.log(torch.tensor([[0.1, 0.2, 0.3, 0.1, 0.2, 0.1],  # window 0's blank, answer 3
                                     [0.1, 0.1, 0.4, 0.1, 0.2, 0.1]]))  # window 1's blank, answer 4
    logits.requires_grad_(True)
    loss = copy_unlikelihood(logits, torch.tensor([3, 4]), ids, seen, torch.tensor([0, 1]))
    expected = (-np.log(0.8) - np.log(0.7)  # window 0: tokens 1 and 2 (3 is its answer)
                - np.log(0.6)) / 2  # window 1: token 2 (4 is its answer, shown twice)
    assert float(loss.detach()) == pytest.approx(expected, rel=1e-5)
    loss.backward()
    grad = logits.grad
    assert grad[0, 1] > 0 and grad[0, 2] > 0 and grad[1, 2] > 0  # a descent step lowers the shown words
    assert grad[0, 3] < 0 and grad[1, 4] < 0  # and raises the answer, never pushed down
    assert grad[0, 5] < 0  # a word no window shows gains from the shown ones' loss


def test_an_adaptation_with_unlikelihood_lowers_a_copied_words_probability(topic_corpus, tmp_path):
    """Trained with the loss against copying, the shipped masked LM gives less to a word the text shows in the
    blank (in the corpus the blank's vehicle is any of eight, the truck just read no likelier) than the same run
    without it (5 steps from one seed: only the loss differs)."""
    def copied(weight: float) -> float:
        cfg = model_config("mlm-head", init_from="minilm-mlm", train_layers=6, seq_len=24, batch_size=8,
                           eval_every=0, warmup=1, lr=1e-4, unlikelihood=weight)
        out = tmp_path / f"ul-{weight}"
        events = list(api.train(RunSpec("mlm-head", out=str(out), corpus=str(topic_corpus), model=cfg, max_steps=5,
                                        log_every=1, seed=0)))
        assert events[-1].status == "completed"
        adapter = api.load(out).adapter
        tok, model = adapter.hf_tokenizer, adapter.model
        total = 0.0
        for sentence, own in (("He drove the truck to town. The [MASK] stopped at the station.", "truck"),
                              ("She played the piano on stage. The [MASK] sounded loud in the hall.", "piano")):
            enc = tok(sentence, return_tensors="pt")
            with torch.no_grad():
                logits = model(**enc).logits[0]
            where = int((enc["input_ids"][0] == tok.mask_token_id).nonzero()[0, 0])
            total += float(logits[where].softmax(-1)[tok.convert_tokens_to_ids(own)])
        return total

    assert copied(6.0) < 0.8 * copied(0.0)  # measured: 0.11 against 0.18
