"""Distilling a teacher across vocabularies: words spelled from the student's pieces, states pooled per
word on both sides, the word-state loss falls, and the run says whom it learned from."""

import json

import numpy as np
import torch

from engine import api
from engine.models.distill import layer_pairs, pool_words, word_index
from engine.training.teacher import Teacher, student_words


def test_words_are_spelled_from_pieces_and_special_tokens_belong_to_none():
    vocabulary = ["[PAD]", "[CLS]", "[SEP]", "play", "##ing", "the", "piano", "##s"]
    ids = np.array([[1, 5, 3, 4, 6, 7, 2, 0], [1, 4, 6, 2, 0, 0, 0, 0]])
    index, words = student_words(ids, vocabulary, {0, 1, 2})
    assert words == [["the", "playing", "pianos"], ["ing", "piano"]]  # a row may start with a stray piece
    assert index.tolist() == [[-1, 0, 1, 1, 2, 2, -1, -1], [-1, 0, 1, -1, -1, -1, -1, -1]]
    on_device, lengths = word_index(torch.from_numpy(ids), torch.from_numpy(ids) <= 2,
                                    torch.tensor([t.startswith("##") for t in vocabulary]))
    assert on_device.tolist() == index.tolist() and lengths.tolist() == [3, 2]  # the same words, without the host


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


def test_a_students_vocabulary_from_its_teacher_splits_text_as_the_teacher_does():
    from transformers import AutoTokenizer

    from engine.models.masked_lm_head import base_folder
    from engine.training.teacher import teacher_vocabulary

    folder = base_folder("all-minilm-l6-v2")
    student, to_teacher = teacher_vocabulary((folder / "tokenizer.json").read_text(encoding="utf-8"))
    assert [student.id_to_token(i) for i in range(5)] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert not any(t.startswith("[unused") for t in student.get_vocab())
    teacher = AutoTokenizer.from_pretrained(folder, local_files_only=True).backend_tokenizer
    teacher.no_padding()
    text = "She deposited the unbelievably large cheque at the Bank, [MASK] said."
    mine, theirs = student.encode(text), teacher.encode(text)
    assert mine.tokens[:3] == ["[CLS]", "she", "deposited"] and mine.tokens == theirs.tokens
    assert to_teacher[mine.ids].tolist() == theirs.ids  # the map reads the student's ids in the teacher's


def test_soft_targets_vanish_when_the_student_predicts_as_the_teacher_and_pull_it_there():
    from engine.models.distill import soft_target_loss

    teacher = torch.tensor([[4.0, 1.0, 0.0, -2.0], [0.0, 3.0, 0.5, 0.0]])
    assert float(soft_target_loss(teacher.clone(), teacher, 2.0)) < 1e-6
    student = torch.zeros_like(teacher, requires_grad=True)
    first = soft_target_loss(student, teacher, 2.0).detach()
    assert float(first) > 0.1
    optimiser = torch.optim.SGD([student], lr=1.0)
    for _ in range(50):
        optimiser.zero_grad()
        soft_target_loss(student, teacher, 2.0).backward()
        optimiser.step()
    assert float(soft_target_loss(student, teacher, 2.0).detach()) < float(first) / 10
    assert student.argmax(-1).tolist() == [0, 1]  # the teacher's favourites became the student's


def test_a_student_of_a_masked_lm_learns_its_predictions_in_its_vocabulary(topic_corpus, tmp_path):
    from tests.conftest import tiny_spec

    spec = tiny_spec("bert", topic_corpus, tmp_path / "s", max_steps=16, teacher="minilm-mlm", lr=3e-3,
                     eval_every=4, warmup=2, nsp=False)
    events = list(api.train(spec))
    assert events[-1].status == "completed"
    soft = [e.metrics["soft_loss"] for e in events if isinstance(e, api.EvalMetrics)]
    assert len(soft) >= 3 and soft[-1] < soft[0]
    config = json.loads((tmp_path / "s" / "config.json").read_text())
    assert config["soft_targets_from"] == "minilm-mlm" and config["vocabulary_from"] == "minilm-mlm"
    from engine.checkpoints.shipped import run_folder

    shipped = json.loads((run_folder("minilm-mlm") / "config.json").read_text())
    assert config["teacher_save_id"] == shipped["save_id"]  # which save of the teacher taught it
    assert config["vocabulary_size"] > 29_000  # the teacher's WordPiece, not one trained on the tiny corpus
    handle = api.load(tmp_path / "s")
    assert len(handle.fill_mask("the [MASK] played the piano", k=3)[0].tokens) == 3
    config["teacher_save_id"] = "0" * 32  # as if the teacher had been saved again since (a remade shipped name)
    (tmp_path / "s" / "config.json").write_text(json.dumps(config))
    resumed = list(api.train(api.RunSpec("bert", out=str(tmp_path / "s"), resume=True, max_steps=18)))
    notes = resumed[0].info.get("notes", [])
    assert resumed[-1].status == "completed" and any("saved again" in n and "00000000" in n for n in notes)
    again = list(api.train(api.RunSpec("bert", out=str(tmp_path / "s"), resume=True, max_steps=20)))
    assert not again[0].info.get("notes")  # the same teacher as last time: nothing to say


def test_an_unknown_teacher_is_named_in_the_error(topic_corpus, tmp_path):
    import pytest

    from tests.conftest import tiny_spec

    spec = tiny_spec("bert", topic_corpus, tmp_path / "u", max_steps=2, teacher="no-such-teacher")
    with pytest.raises(api.Word2BertError, match="no-such-teacher.*masked-LM run"):
        list(api.train(spec))


def test_an_identity_map_compares_the_students_own_states_and_needs_the_teachers_width(topic_corpus, tmp_path):
    import pytest

    from engine.models.distill import WordDistillation
    from tests.conftest import tiny_spec

    same = WordDistillation(4, 4, [(1, 2)], identity=True)
    assert not list(same.parameters())  # nothing learned between the two: the student's states are the answer
    states = [torch.zeros(1, 2, 4), torch.tensor([[[1.0, 0, 0, 0], [0, 2.0, 0, 0]]])]
    targets = [torch.tensor([[[3.0, 0, 0, 0], [1.0, 0, 0, 0]]])]  # word 0: same direction, word 1: orthogonal
    loss = same(states, torch.tensor([[0, 1]]), targets, torch.tensor([[True, True]]))
    assert float(loss) == pytest.approx(0.5)  # mean of 1 - cos: 0 and 1
    with pytest.raises(ValueError, match="as wide as its teacher"):
        WordDistillation(4, 8, [(1, 2)], identity=True)
    spec = tiny_spec("bert", topic_corpus, tmp_path / "i", max_steps=2, teacher="all-minilm-l6-v2",
                     distill_map="identity")
    with pytest.raises(api.Word2BertError, match="as wide as its teacher .*teacher 384"):
        list(api.train(spec))
