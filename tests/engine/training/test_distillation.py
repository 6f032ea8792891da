"""Distilling a teacher across vocabularies: words spelled from the student's pieces, states pooled per
word on both sides, the word-state loss falls, and the run says whom it learned from."""

import json

import numpy as np
import torch

from engine import api
from engine.models.distill import layer_pairs, pool_words
from engine.training.teacher import Teacher, student_words


def test_words_are_spelled_from_pieces_and_special_tokens_belong_to_none():
    vocabulary = ["[PAD]", "[CLS]", "[SEP]", "play", "##ing", "the", "piano", "##s"]
    ids = np.array([[1, 5, 3, 4, 6, 7, 2, 0], [1, 4, 6, 2, 0, 0, 0, 0]])
    index, words = student_words(ids, vocabulary, {0, 1, 2})
    assert words == [["the", "playing", "pianos"], ["ing", "piano"]]  # a row may start with a stray piece
    assert index.tolist() == [[-1, 0, 1, 1, 2, 2, -1, -1], [-1, 0, 1, -1, -1, -1, -1, -1]]


def test_pooling_averages_each_words_pieces():
    states = torch.arange(12, dtype=torch.float32).reshape(1, 4, 3)  # 4 tokens, 3 dims
    pooled = pool_words(states, torch.tensor([[-1, 0, 0, 1]]), 2)
    assert torch.equal(pooled[0, 0], (states[0, 1] + states[0, 2]) / 2) and torch.equal(pooled[0, 1], states[0, 3])
    assert layer_pairs(4, 6) == [(1, 2), (2, 3), (3, 4), (4, 6)]


def test_the_teacher_gives_one_state_per_student_word():
    teacher = Teacher("all-minilm-l6-v2", torch.device("cpu"))
    states, valid = teacher.word_states([["the", "unbelievably", "long", "river"], ["bank"]], [6])
    assert states[0].shape == (2, 4, 384) and valid.tolist() == [[True] * 4, [True, False, False, False]]
    alone = teacher.word_states([["the", "unbelievably", "long", "river"]], [6])[0][0]
    assert torch.allclose(alone[0], states[0][0], atol=1e-4)  # padding does not change a row's words


def test_a_distilled_run_lowers_the_word_state_loss_and_records_its_teacher(topic_corpus, tmp_path):
    from tests.conftest import tiny_spec

    spec = tiny_spec("bert", topic_corpus, tmp_path / "d", max_steps=24, teacher="all-minilm-l6-v2", lr=3e-3,
                     eval_every=4, warmup=2)
    events = list(api.train(spec))
    assert events[-1].status == "completed"
    distances = [e.metrics["distill_loss"] for e in events if isinstance(e, api.EvalMetrics)]
    assert len(distances) >= 3 and distances[-1] < distances[0] - 0.05
    config = json.loads((tmp_path / "d" / "config.json").read_text())
    assert config["distilled_from"] == "all-minilm-l6-v2" and config["model"]["teacher"] == "all-minilm-l6-v2"
    handle = api.load(tmp_path / "d")  # a plain BERT run: only the student was saved
    assert handle.fill_mask("the [MASK] played the piano", k=3)[0].tokens
