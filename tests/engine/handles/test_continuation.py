"""A continuation reads as text: it stops where the model ends the text, goes on after a sentence break
written as a space, never writes a token that stands for no text, and joins words the way text is written."""

import dataclasses

import numpy as np
import pytest
import torch

from engine import api
from engine.handles.continuation import (
    choose,
    clean_spaces,
    context_words,
    last_sentence,
    repeats,
    starts_glued_sentence,
    token_roles,
)
from engine.models.wrappers.protocol import ForwardOutput


@pytest.fixture(scope="module")
def handles(contextual_runs):
    return {kind: api.load(run_dir) for kind, (run_dir, _) in contextual_runs.items()}


def test_words_are_joined_as_text_is_written():
    assert clean_spaces(" end of the day .") == " end of the day."
    assert clean_spaces(" i ' m not sure , are you ?") == " i'm not sure, are you?"
    assert clean_spaces(" it does n't matter ; it 's fine") == " it doesn't matter; it's fine"
    assert clean_spaces(' the end of the year . " i have to go , " said') == ' the end of the year. "i have to go," said'
    assert clean_spaces(' he said " no . "') == ' he said "no."'
    assert clean_spaces('" i am not sure , " he said .') == '"i am not sure," he said.'  # a quote opens the text
    assert clean_spaces(' " hi " .') == ' "hi".'
    assert clean_spaces(" , the united kingdom") == ", the united kingdom"  # a continuation begun with a comma


def test_a_run_already_in_the_text_is_not_repeated():
    text = ["i", "will", "go", "to", "the", "gym", "and", "go", "to", "the"]
    assert repeats(text, 3) == ["gym"]  # "to the gym" again would start the loop
    assert repeats(text, 2) == ["gym"]  # "the gym"
    assert repeats([*text, "gym", "and", "go"], 2) == ["to", "to"]  # "go to", once for each earlier one
    assert repeats(text, 4) == ["gym"] and repeats(text, 5) == [] and repeats(text, 0) == []
    assert repeats(["a", "b", ".", "</s>", "<s>", "a", "b"], 3, keep=(".",)) == []  # a sentence may always end
    assert sorted(repeats(list("abab"), 1)) == ["a", "a", "b", "b"]  # 1: no token twice


def test_choose_avoids_repeats_unless_nothing_else_is_left():
    logits = np.array([5.0, 1.0, 4.0, -np.inf])
    rng = np.random.default_rng(0)
    assert choose(logits, 0.0, rng, (), avoid=[0]) == 2
    assert choose(logits, 0.0, rng, (1,), avoid=[0, 2]) == 0  # everything allowed is a repeat: the likeliest
    assert {choose(logits, 1.0, rng, (), avoid=[0, 2]) for _ in range(50)} == {1}


@pytest.mark.parametrize(("before", "token", "glued"), [
    ("future.", "i", True), ("day.", "the", True), ("ok!", "we", True), ('said."', "it", True),
    ("u.", "s", False),  # u.s.: one letter after a full stop is an abbreviation's
    ("e.", "g", False), ("3.", "14", False), ("the", "end", False), ("day.", " the", False),
])
def test_a_sentence_glued_to_the_one_before_is_found(before, token, glued):
    assert starts_glued_sentence(before, token) is glued


def test_token_roles_stop_at_the_end_of_text_break_at_a_sentence_start_and_ban_the_rest():
    minilm = token_roles([0, 100, 101, 102, 103], start=(101,), end_of_text=None)  # [CLS] before each sentence
    assert minilm.stop == frozenset() and minilm.breaks == {101} and minilm.banned == (0, 100, 102, 103)
    ours = token_roles([0], start=(0,), end_of_text=0)  # our GPT: its separator ends a document
    assert ours.stop == {0} and not ours.breaks and not ours.banned
    gpt2 = token_roles([50256], start=(50256,), end_of_text=50256)
    assert gpt2.stop == {50256} and not gpt2.breaks


def test_choose_takes_the_likeliest_allowed_token_or_samples_among_the_allowed():
    logits = np.array([5.0, 1.0, 4.0, 0.5])
    rng = np.random.default_rng(0)
    assert choose(logits, 0.0, rng, ()) == 0 and choose(logits, 0.0, rng, (0,)) == 2
    drawn = {choose(logits, 1.0, rng, (0, 2)) for _ in range(200)}
    assert drawn == {1, 3}  # both allowed tokens drawn, never a banned one
    assert logits[0] == 5.0  # the caller's row is left as it was


def test_sampling_draws_from_the_likeliest_tokens_that_hold_most_of_the_probability():
    """Nucleus sampling: the long tail of unlikely tokens (a small model's gibberish) is never drawn."""
    p = np.array([0.6, 0.3, 0.06, 0.02, 0.01, 0.01])  # the first three hold 0.96 >= TOP_P
    rng = np.random.default_rng(0)
    drawn = [choose(np.log(p), 1.0, rng, ()) for _ in range(3000)]
    assert set(drawn) == {0, 1, 2}
    assert 0.55 < drawn.count(0) / len(drawn) < 0.68  # in proportion within the nucleus (0.6 / 0.96)


def _scripted(handle, script):
    """Make ``handle``'s network say each id of ``script`` in turn, whatever it reads."""
    vocab = handle.adapter.tokenizer.get_vocab_size()
    calls = iter(script)

    def forward(ids, *args, **kwargs):
        logits = torch.full((1, 1, vocab), -10.0)
        logits[0, 0, next(calls)] = 10.0
        return ForwardOutput([], [], logits, None)

    return forward


def test_our_gpt_stops_at_the_end_of_a_text_and_parts_glued_sentences(handles, contextual_runs, monkeypatch):
    """A GPT trained before 2026-12-06 read a document's sentences glued together ("end.the"): where it writes
    that, the space is put back. One trained on the text with its spaces (its config says so) writes its own."""
    import json

    gpt = handles["gpt"]
    assert json.loads((contextual_runs["gpt"][0] / "config.json").read_text())["sentences_spaced"] is True
    assert not gpt.adapter.glued_sentences
    tok = gpt.adapter.tokenizer
    sentence, glued = tok.encode("the end.").ids, tok.encode("the piano").ids  # (no space)
    end = gpt.adapter.end_of_text
    assert end is not None and tok.id_to_token(end) == "<|endoftext|>"
    monkeypatch.setattr(gpt, "_forward", _scripted(gpt, [*sentence, *glued, end, *sentence]))
    assert gpt.generate("she played", tokens=50) == "the end.the piano"  # nothing after the end of the text
    monkeypatch.setattr(gpt.adapter, "glued_sentences", True)  # as an older run's config reads
    monkeypatch.setattr(gpt, "_forward", _scripted(gpt, [*sentence, *glued, end]))
    assert gpt.generate("she played", tokens=50) == "the end. the piano"


def test_our_gpt_exported_to_transformers_stops_at_its_eos_and_keeps_its_own_text(contextual_runs, tmp_path,
                                                                                 monkeypatch):
    """Only our GPT is known to have read sentences glued together; a Hugging Face model's "end.the" is its own
    writing, and its eos token ends the text."""
    from engine.cli.export import export_hf

    hf = api.load(export_hf(contextual_runs["gpt"][0], tmp_path / "hf"))
    tok = hf.adapter.tokenizer
    end = hf.adapter.end_of_text
    assert end is not None and tok.id_to_token(end) == "<|endoftext|>"
    script = [*tok.encode("the end.").ids, *tok.encode("the piano").ids, end, *tok.encode("the").ids]
    monkeypatch.setattr(hf, "_forward", _scripted(hf, script))
    assert hf.generate("she played", tokens=50) == "the end.the piano"


def test_elmo_goes_on_past_the_end_of_a_sentence_and_never_writes_unk(handles, monkeypatch):
    elmo = handles["elmo"]
    find = elmo.word_list.find
    the, piano, full_stop, end, unk = (find(w) for w in ("the", "piano", ".", "</s>", "<unk>"))
    assert None not in (the, piano, full_stop, end, unk)
    script = iter([the, piano, full_stop, end, unk, piano])
    seen: list[list[str]] = []

    def next_word(words):
        seen.append(list(words))
        scores = torch.full((len(elmo.word_list),), -10.0)
        chosen = next(script)
        scores[chosen] = 10.0
        if chosen == unk:
            scores[piano] = 5.0  # second: what is written where the likeliest is <unk>
        return scores

    monkeypatch.setattr(elmo, "_next_word_log_probs", next_word)
    assert elmo.generate("She played", tokens=6) == " the piano. piano piano"
    assert seen[4][-4:] == ["piano", ".", "</s>", "<s>"]  # the next sentence read as in training
    assert seen[5][-2:] == ["<s>", "piano"]  # <unk> was not chosen, so not read as if written


def test_a_sentence_a_word_level_model_ends_without_punctuation_is_marked():
    """Conversation is typed without full stops ("im alright"): a 3-gram's continuation ran two sentences
    together unseen ("the river flows into the program i think"); now such an end is marked, and one after a full
    stop, or before anything was written after a full stop, is not."""
    from engine.handles.continuation import NextWords, continue_words

    words = ["<unk>", "<s>", "</s>", "program", "i", "think", ".", "so"]
    for context, script, written in (
            (["the"], ["program", "</s>", "i", "think"], " program / i think"),
            (["the"], ["program", ".", "</s>", "i", "think"], " program. i think"),
            (["the"], ["</s>", "i", "think"], " / i think"),  # the text's own sentence ended by the model
            (["left", "."], ["</s>", "i", "think"], " i think"),
            ([], ["i", "think"], " i think")):
        steps = iter(script)

        def log_probs(_, steps=steps):
            scores = np.full(len(words), -20.0)
            scores[words.index(next(steps))] = 0.0
            return scores

        model = NextWords(words, log_probs, (0, 1))
        assert continue_words(model, list(context), len(script), 0.0, 0) == written, (context, script)


def test_a_word_level_model_reads_a_new_sentence_as_it_was_trained_on_one():
    assert context_words("I went home. She said", True) == ["i", "went", "home", ".", "</s>", "<s>", "she", "said"]
    assert context_words("she played the", True) == ["she", "played", "the"]
    assert context_words("i went home. she said", True) == ["i", "went", "home", ".", "</s>", "<s>", "she", "said"]
    assert last_sentence(["i", "went", ".", "</s>", "<s>", "she"]) == ["she"]
    assert last_sentence(["she", "played"]) == ["she", "played"]
    assert last_sentence(["home", ".", "</s>", "<s>"]) == []


@pytest.fixture(scope="module")
def word_models(topic_corpus, tmp_path_factory):
    """A Kneser-Ney 3-gram, a Laplace bigram and an NNLM trained on the topic corpus."""
    from engine.config.settings import NGramConfig

    root = tmp_path_factory.mktemp("word-models")
    made = {}
    for name, kind, model in (("kn3", "ngram", NGramConfig(order=3, min_count=1)),
                              ("laplace2", "ngram", NGramConfig(order=2, smoothing="laplace", min_count=1)),
                              ("nnlm", "nnlm", api.model_config("nnlm", epochs=1))):
        list(api.train(api.RunSpec(kind, out=str(root / name), corpus=str(topic_corpus), model=model)))
        made[name] = api.load(root / name)
    return made


@pytest.mark.parametrize("name", ["kn3", "laplace2", "nnlm"])
def test_an_ngram_or_nnlm_predicts_the_next_word_with_the_probabilities_it_scores_with(word_models, name):
    """The student's first language models in the Next token view: their next words are the ones their sentence
    score uses, the whole distribution sums to one, and they read only the sentence begun last."""
    h = word_models[name]
    assert api.Capability.NEXT_TOKEN in h.capabilities
    sentence = "she played the piano"
    score = h.score(sentence)  # log p of each word given the words before it in the sentence, then of </s>
    first = h._next_words.log_probs([])  # (a sentence not yet begun)
    assert np.isclose(first[h._next_words.words.index("she")], score.token_logprobs[0], atol=1e-5)
    for k, word in enumerate([*sentence.split(), "</s>"][1:], 1):
        before = " ".join(sentence.split()[:k])
        every = h.next_token(f"It rained all day. {before[0].upper()}{before[1:]}", k=100)  # only the last sentence
        assert word in every.tokens, (k, word)
        assert np.isclose(np.log(every.probs[every.tokens.index(word)]), score.token_logprobs[k], atol=1e-5)
    assert np.isclose(np.exp(first).sum(), 1.0, atol=1e-4)
    assert list(every.probs) == sorted(every.probs, reverse=True)


@pytest.mark.parametrize("name", ["kn3", "nnlm"])
def test_an_ngram_or_nnlm_writes_sentences_without_unknown_words(word_models, name):
    h = word_models[name]
    text = h.generate("she played the", tokens=40, temperature=1.0, seed=3)
    assert text.startswith(" ") and "<unk>" not in text and "<s>" not in text and "</s>" not in text
    assert h.generate("she played the", tokens=40) == h.generate("she played the", tokens=40)  # greedy: the same


def test_a_greedy_loop_is_broken_where_no_run_may_repeat(handles, word_models, monkeypatch):
    """A network that always ranks its tokens the same way loops at temperature 0; with ``no_repeat`` it never
    writes a run of that many tokens twice (the prompt's included), Transformers and word-level models alike."""
    gpt = handles["gpt"]
    vocab = gpt.adapter.tokenizer.get_vocab_size()
    ranking = torch.linspace(10.0, -10.0, vocab)  # token 0 likeliest, then 1, 2, …
    ranking[gpt.adapter.end_of_text] = -20.0
    monkeypatch.setattr(gpt, "_forward", lambda *a, **k: ForwardOutput([], [], ranking[None, None], None))
    written: list[list[int]] = []
    monkeypatch.setattr("engine.handles.continuation.written",
                        lambda adapter, token_text, new, breaks: written.append(list(new)) or "")
    gpt.generate("she played", tokens=30)
    prompt = gpt._encode("she played")[0]
    assert len(set(written[0])) == 1  # the same token over and over
    gpt.generate("she played", tokens=30, no_repeat=2)
    ids = [*prompt, *written[1]]
    pairs = list(zip(ids, ids[1:], strict=False))
    assert len(written[1]) == 30 and len(pairs) == len(set(pairs))
    for name in ("kn3", "nnlm"):
        h = word_models[name]
        read: list[list[str]] = []  # the words each next word was chosen after, </s> <s> between sentences
        log_probs = h._next_words.log_probs
        monkeypatch.setattr(h, "_next_words", dataclasses.replace(
            h._next_words, log_probs=lambda context, f=log_probs, r=read: r.append(list(context)) or f(context)))
        h.generate("she played the", tokens=60, no_repeat=3)
        words = read[-1]
        runs = [tuple(words[i:i + 3]) for i in range(len(words) - 2) if words[i + 2] not in ("</s>", "<s>")]
        assert len(words) > 60 and len(runs) == len(set(runs)), name  # (a sentence may always end)


@pytest.mark.parametrize(("setting", "said"), [
    ({"tokens": 0}, "tokens"), ({"tokens": "5"}, "tokens"), ({"temperature": float("nan")}, "temperature"),
    ({"temperature": -1.0}, "temperature"), ({"seed": -3}, "seed"), ({"seed": None}, "seed"),
    ({"no_repeat": -1}, "no_repeat"), ({"no_repeat": True}, "no_repeat"), ({"no_repeat": 2.5}, "no_repeat"),
])
def test_a_continuations_settings_are_checked_with_a_message(handles, word_models, setting, said):
    for h in (handles["gpt"], word_models["kn3"]):
        with pytest.raises(api.InputError, match=said):
            h.generate("she played the", **setting)


def test_a_masked_model_does_not_continue_text(handles):
    with pytest.raises(api.Unsupported):
        handles["bert"].generate("she played the")
