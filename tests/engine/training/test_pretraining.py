"""BERT's masking and next-sentence data, and the contextual models' training runs."""

import json
import math

import numpy as np
import pytest
import torch

from engine import api
from engine.models.bert import IGNORE, mask_tokens
from engine.training.events import EvalMetrics, RunFinished, StepMetrics
from engine.training.pretrain_data import bert_pairs, token_windows
from tests.conftest import tiny_spec


def test_masking_follows_15_and_80_10_10():
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(5, 1000, (400, 128), generator=gen)
    ids[:, 0], ids[:, -1], ids[:, 100:] = 2, 3, 0  # [CLS] ... [SEP], then padding
    special = ids < 5
    inputs, labels = mask_tokens(ids, special, mask_id=4, vocab_size=1000, first_normal=5, generator=gen)
    chosen = labels != IGNORE
    assert not chosen[special].any(), "special tokens are never chosen"
    assert (labels[chosen] == ids[chosen]).all()
    share = chosen.sum().item() / (~special).sum().item()
    assert 0.14 < share < 0.16
    n = chosen.sum().item()
    masked = (inputs[chosen] == 4).sum().item() / n
    unchanged = (inputs[chosen] == ids[chosen]).sum().item() / n
    random = 1 - masked - unchanged
    assert 0.78 < masked < 0.82
    assert 0.085 < unchanged < 0.115  # includes the rare random draw of the same token
    assert 0.085 < random < 0.115
    assert (inputs[~chosen] == ids[~chosen]).all()


def _docs(n_docs=200, seed=0):
    rng = np.random.default_rng(seed)
    return [[rng.integers(10, 500, rng.integers(5, 15)).astype(np.int32) for _ in range(rng.integers(1, 8))]
            for _ in range(n_docs)]


def test_next_sentence_pairs_are_half_true_and_true_pairs_stay_in_their_document():
    docs = _docs()
    pairs = bert_pairs(docs, 64, np.random.default_rng(1), cls_id=2, sep_id=3)
    share = pairs["is_next"].mean()
    assert 0.42 < share < 0.58
    true = pairs["is_next"] == 1
    assert (pairs["doc_a"][true] == pairs["doc_b"][true]).all()
    assert (pairs["doc_a"][~true] != pairs["doc_b"][~true]).all()
    ids, seg = pairs["ids"], pairs["segments"]
    assert (ids[:, 0] == 2).all()
    for row, s in zip(ids[:50], seg[:50], strict=True):
        seps = np.flatnonzero(row == 3)
        assert len(seps) == 2 and (s[: seps[0] + 1] == 0).all() and (s[seps[0] + 1 : seps[1] + 1] == 1).all()
        assert (row[seps[1] + 1 :] == 0).all() and (s[seps[1] + 1 :] == 0).all()


def test_true_next_pairs_are_consecutive_text():
    docs = [[np.full(4, 100 * d + s, np.int32) for s in range(6)] for d in range(30)]
    pairs = bert_pairs(docs, 24, np.random.default_rng(0), cls_id=2, sep_id=3)
    for row, nxt in zip(pairs["ids"], pairs["is_next"], strict=True):
        if nxt:
            body = row[(row != 2) & (row != 3) & (row != 0)]
            sentences = [v % 100 for v in body[::4]]
            assert sentences == list(range(sentences[0], sentences[0] + len(sentences)))


def test_token_windows_follow_the_stream():
    w = token_windows([[np.arange(10, dtype=np.int32)]], 4, separator=99)
    assert w.shape == (2, 5)
    assert w[0].tolist() == [0, 1, 2, 3, 4] and w[1].tolist() == [4, 5, 6, 7, 8]


def test_a_gpt_reads_a_documents_sentences_as_its_text(contextual_runs):
    """Byte-level tokens keep spaces: the stream a GPT learns from must be "day. she", not "day.she" (a model that
    read sentences glued together writes them glued together)."""
    from engine.data.corpora import Document
    from engine.data.inputs import byte_level
    from engine.data.text import load_subword_tokenizer
    from engine.training.pretrain_data import encode_documents

    tok = load_subword_tokenizer(contextual_runs["gpt"][0] / "tokenizer.json")
    assert byte_level(tok) and not byte_level(load_subword_tokenizer(contextual_runs["bert"][0] / "tokenizer.json"))
    doc = Document("d", "test", ("she played the piano.", "the hall was full."))  # (its tokenizer lowercases)
    spaced, _ = encode_documents([doc], tok, spaced=True)
    assert tok.decode(np.concatenate(spaced[0]).tolist()) == "she played the piano. the hall was full."
    glued, _ = encode_documents([doc], tok)  # (WordPiece drops spaces anyway: BERT's stream is unchanged)
    assert tok.decode(np.concatenate(glued[0]).tolist()) == "she played the piano.the hall was full."


@pytest.mark.parametrize("kind", ["bert", "gpt", "elmo"])
def test_each_contextual_model_learns(contextual_runs, kind):
    run_dir, events = contextual_runs[kind]
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.status == "completed"
    losses = [e.loss for e in events if isinstance(e, StepMetrics)]
    assert losses[-1] < losses[0] - 0.5, losses
    evals = [e.metrics for e in events if isinstance(e, EvalMetrics)]
    assert evals
    config = json.loads((run_dir / "config.json").read_text())
    assert config["kind"] == kind and config["trained_steps"] == 40
    assert (run_dir / ("vocab.txt" if kind == "elmo" else "tokenizer.json")).exists()


def test_bert_reports_mlm_and_nsp_metrics_and_keeps_history(contextual_runs):
    run_dir, events = contextual_runs["bert"]
    metrics = [e.metrics for e in events if isinstance(e, EvalMetrics)][-1]
    assert {"mlm_loss", "mlm_accuracy", "nsp_accuracy"} <= set(metrics)
    assert metrics["mlm_accuracy"] > 0.1  # chance is 1/200 on this vocabulary
    history = sorted(p.name for p in (run_dir / "checkpoints").iterdir())
    assert history == ["step-0000020", "step-0000040"]
    old = api.load(run_dir / "checkpoints" / "step-0000020")
    assert old.info["trained_steps"] == 20


def test_elmo_evaluation_logs_a_held_out_loss_on_the_training_loss_scale(contextual_runs):
    """Every family's evaluation has a held-out loss to draw beside its training loss: ELMo's is the mean of both
    directions' nats a word, whose exp is the perplexity it logs (a curve on another scale would mislead)."""
    _, events = contextual_runs["elmo"]
    last = [e.metrics for e in events if isinstance(e, EvalMetrics)][-1]
    assert math.isclose(math.exp(last["loss"]), last["perplexity"], rel_tol=1e-9)
    assert math.isclose(last["loss"], (math.log(last["forward_perplexity"]) + math.log(last["backward_perplexity"])) / 2,
                        rel_tol=1e-9)
    final_train = [e.loss for e in events if isinstance(e, StepMetrics)][-1]
    assert abs(last["loss"] - final_train) < 1.5, (last["loss"], final_train)  # the same scale, not a perplexity


def test_overfits_one_batch():
    from engine.config.settings import BertConfig, ElmoConfig, GPTConfig
    from engine.models.bert import Bert
    from engine.models.elmo import BiLM
    from engine.models.gpt import GPT

    torch.manual_seed(0)
    ids = torch.randint(5, 50, (4, 16))
    chars = torch.randint(1, 200, (4, 14, 12))
    elmo_cfg = ElmoConfig(proj=32, hidden=64, filters="1:8,2:16", max_chars=12, dropout=0.0)
    for model, loss_of in (
        (Bert(BertConfig(vocab_size=50, hidden=32, layers=1, heads=2, intermediate=64, max_len=16, dropout=0.0)),
         lambda m: m(ids, torch.zeros_like(ids), None, ids, torch.ones(4, dtype=torch.long))["loss"]),
        (GPT(GPTConfig(vocab_size=50, hidden=32, layers=1, heads=2, intermediate=64, max_len=16, dropout=0.0)),
         lambda m: m(ids[:, :-1], ids[:, 1:])["loss"]),
        (BiLM(elmo_cfg, 50), lambda m: m(chars, ids[:, 2:], ids[:, :-2])["loss"]),
    ):
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        first = None
        for _ in range(200 if isinstance(model, BiLM) else 60):
            loss = loss_of(model)
            first = first if first is not None else loss.item()
            opt.zero_grad()
            loss.backward()
            # clipped as the training loop clips (clip 1.0): unclipped, Adam at 1e-2 threw the LSTM off a loss of
            # 0.07 to 1.7 at its last step on an AMD EPYC (the same seed passed on an Intel Xeon)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        assert loss.item() < 0.2 * first


def test_resume_continues_to_the_planned_length(topic_corpus, tmp_path):
    import threading

    stop = threading.Event()
    events = []
    for ev in api.train(tiny_spec("gpt", topic_corpus, tmp_path / "g", max_steps=30), stop=stop):
        events.append(ev)
        if isinstance(ev, StepMetrics) and ev.step >= 10:
            stop.set()
    assert events[-1].status == "stopped" and events[-1].step == 10
    spec = tiny_spec("gpt", topic_corpus, tmp_path / "g", max_steps=None)
    spec.resume = True
    resumed = list(api.train(spec))
    assert resumed[-1].status == "completed" and resumed[-1].step == 30
    steps = [e.step for e in resumed if isinstance(e, StepMetrics)]
    assert steps[0] == 20  # continued, not restarted


def test_cli_presets_and_overrides():
    import argparse

    from engine.cli.train import _model_config, _train_parser

    args = _train_parser("bert").parse_args(["bert", "--preset", "base", "--layers", "2", "--out", "x"])
    cfg = _model_config("bert", args)
    assert (cfg.hidden, cfg.heads, cfg.layers, cfg.vocab_size) == (768, 12, 2, 30522)
    with pytest.raises(ValueError, match="preset"):
        _model_config("bert", argparse.Namespace(m_preset="huge"))


def test_a_fresh_elmo_run_on_a_gpu_takes_the_gpu_batch_unless_told_and_says_so(capsys):
    from engine import api
    from engine.cli.train import _model_config, _train_parser

    cpu_cfg = _model_config("elmo", _train_parser("elmo").parse_args(["elmo", "--out", "x"]), "cpu")
    gpu_args = _train_parser("elmo").parse_args(["elmo", "--out", "x"])
    gpu_cfg = _model_config("elmo", gpu_args, "cuda")
    assert (cpu_cfg.batch_size, cpu_cfg.lr) == (32, 5e-4)  # the CPU keeps the family's defaults
    assert (gpu_cfg.batch_size, gpu_cfg.lr) == (512, 1e-3)
    said = capsys.readouterr().err
    assert "elmo on cuda trains with batch size 512, lr 0.001" in said and "--batch-size --lr" in said
    told = _model_config("elmo", _train_parser("elmo").parse_args(["elmo", "--out", "x", "--batch-size", "32"]), "cuda")
    assert (told.batch_size, told.lr) == (32, 1e-3)  # what the user gives wins; the rest still follows the GPU
    assert _model_config("bert", _train_parser("bert").parse_args(["bert", "--out", "x"]), "cuda").batch_size == \
        _model_config("bert", _train_parser("bert").parse_args(["bert", "--out", "x"]), "cpu").batch_size
    # the app's form shows the values a run on that device trains with
    shown = {s.name: s.value for s in api.model_settings("elmo", "tiny", "cuda")}
    assert (shown["batch_size"], shown["lr"]) == (512, 1e-3)
    assert {s.name: s.value for s in api.model_settings("elmo", "tiny", "mps")}["batch_size"] == 32  # not measured there
