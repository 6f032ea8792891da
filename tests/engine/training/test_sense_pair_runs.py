"""A masked-LM adaptation that also learns word senses from word-in-context pairs (``--sense-pairs``)."""

import dataclasses
import json

import pytest
import torch

from engine import api
from engine.config.run_spec import RunSpec
from engine.config.settings import model_config

RIVER = ["We sat on the grassy bank of the river .", "The boat drifted toward the muddy bank .",
         "Reeds grew thick along the bank of the stream ."]
MONEY = ["She deposited the money at the bank .", "The bank raised its interest rates .",
         "He asked the bank for a loan ."]


def pairs_file(folder):
    """18 pairs of "bank" (river / money), both labels, in the one-file layout."""
    rows = []
    for a in RIVER + MONEY:
        for b in RIVER + MONEY:
            if a < b:
                i, j = a.split(" ").index("bank"), b.split(" ").index("bank")
                rows.append(f"bank\tN\t{i}-{j}\t{a}\t{b}\t{'T' if (a in RIVER) == (b in RIVER) else 'F'}")
    path = folder / "bank-pairs.tsv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_a_run_with_sense_pairs_reports_them_and_records_what_it_learned_from(topic_corpus, tmp_path):
    pairs = pairs_file(tmp_path)
    cfg = model_config("mlm-head", train_layers=1, seq_len=24, batch_size=4, eval_every=0, warmup=1, lr=1e-3,
                       sense_pairs=str(pairs), sense_batch=4)
    out = tmp_path / "run"
    events = list(api.train(RunSpec("mlm-head", out=str(out), corpus=str(topic_corpus), model=cfg, max_steps=2,
                                    log_every=1)))
    assert events[-1].status == "completed"
    started = next(e for e in events if isinstance(e, api.RunStarted))
    assert any("word-in-context pairs: 14" in n for n in started.info["notes"])  # 15 pairs, one held out
    # and the development sense set's pairs, of 24 words the file does not teach: does what is learned carry?
    assert any("scored also on 480 pairs of 24 words it is not taught" in n for n in started.info["notes"])
    evals = [e for e in events if isinstance(e, api.EvalMetrics)]
    assert {"mlm_accuracy", "sense_pair_accuracy", "sense_pair_accuracy_new_words"} <= set(evals[-1].metrics)
    assert evals[-1].metrics["sense_pairs_new_words_scored"] == 480
    assert 0 <= evals[-1].metrics["sense_pair_accuracy_new_words"] <= 1
    config = json.loads((out / "config.json").read_text())
    assert config["model"]["sense_pairs"] == str(pairs) and config["sense_pairs_trained"] == 14
    assert config["sense_pairs_heldout"] == 1 and len(config["sense_pairs_fingerprint"]) == 16
    info = api.load(out).info  # the library says what the model learned from
    assert "learned senses from 14 word-in-context pairs (bank-pairs.tsv)" in info["description"]
    events = list(api.train(RunSpec("mlm-head", out=str(out), corpus=str(topic_corpus), model=cfg, max_steps=3,
                                    resume=True)))
    assert events[-1].status == "completed"  # a resume reads the same pairs again
    pairs.write_text(pairs.read_text().replace("\tT\n", "\tF\n", 1), encoding="utf-8")
    events = list(api.train(RunSpec("mlm-head", out=str(out), corpus=str(topic_corpus), model=cfg, max_steps=4,
                                    resume=True)))
    started = next(e for e in events if isinstance(e, api.RunStarted))
    assert any("changed since this run started" in n for n in started.info["notes"])
    taught = tmp_path / "cabinet-pairs.tsv"  # a file that teaches a development word: that word is not scored as new
    taught.write_text(pairs.read_text().replace("bank", "cabinet"), encoding="utf-8")
    events = list(api.train(RunSpec("mlm-head", out=str(tmp_path / "run2"), corpus=str(topic_corpus),
                                    model=dataclasses.replace(cfg, sense_pairs=str(taught)),
                                    max_steps=1)))
    started = next(e for e in events if isinstance(e, api.RunStarted))
    assert any("scored also on 460 pairs of 23 words" in n for n in started.info["notes"])


def test_the_sense_loss_pulls_same_sense_pairs_together(tmp_path):
    from engine.data.sense_pairs import encode_pairs, read_sense_pairs
    from engine.models.masked_lm_head import build, set_trainable
    from engine.models.sense_loss import hf_states, pair_cosines, sense_pair_loss

    torch.manual_seed(0)
    model, tokenizer = build("all-minilm-l6-v2")
    set_trainable(model, 2)
    pairs = read_sense_pairs(pairs_file(tmp_path))
    ids, pieces = encode_pairs(pairs, tokenizer.backend_tokenizer, tokenizer.cls_token_id, tokenizer.sep_token_id,
                               tokenizer.pad_token_id)
    ids, pieces = torch.from_numpy(ids).long(), torch.from_numpy(pieces)
    same = torch.tensor([p.same for p in pairs])
    optimiser = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    model.eval()  # no dropout: the same loss twice for the same weights

    def gap() -> float:
        with torch.no_grad():
            cos = pair_cosines(hf_states(model), ids, pieces, tokenizer.pad_token_id, 0)
        return float(cos[same].mean() - cos[~same].mean())

    before_gap = gap()
    losses = []
    for _ in range(6):
        out = sense_pair_loss(hf_states(model), ids, pieces, same, tokenizer.pad_token_id)
        optimiser.zero_grad()
        out["loss"].backward()
        optimiser.step()
        losses.append(float(out["sense_loss"]))
    assert losses[-1] < losses[0]
    assert gap() > before_gap  # same-sense pairs now closer than different-sense ones, by more than before


def test_a_sense_loss_at_a_layer_that_does_not_learn_is_refused_before_training(topic_corpus, tmp_path):
    cfg = model_config("mlm-head", train_layers=1, seq_len=24, batch_size=4, sense_pairs=str(pairs_file(tmp_path)),
                       sense_batch=4, sense_layer=3)
    with pytest.raises(ValueError, match="only layers 6-6 learn"):
        list(api.train(RunSpec("mlm-head", out=str(tmp_path / "x"), corpus=str(topic_corpus), model=cfg, max_steps=1)))
    with pytest.raises(ValueError, match="sense_batch .* cannot exceed batch_size"):
        RunSpec("mlm-head", out=str(tmp_path / "y"), model=model_config("mlm-head", batch_size=4, sense_batch=8,
                                                                         sense_pairs="x.tsv"))


def test_our_bert_learns_senses_from_pairs_beside_mlm(topic_corpus, tmp_path):
    from tests.conftest import tiny_spec

    pairs = pairs_file(tmp_path)
    out = tmp_path / "bert-senses"
    events = list(api.train(tiny_spec("bert", topic_corpus, out, max_steps=3, sense_pairs=str(pairs), sense_batch=4,
                                      batch_size=8, eval_every=0, keep_every=0)))
    assert events[-1].status == "completed"
    evals = [e for e in events if isinstance(e, api.EvalMetrics)]
    assert {"mlm_accuracy", "sense_pair_accuracy"} <= set(evals[-1].metrics)
    config = json.loads((out / "config.json").read_text())
    assert config["sense_pairs_trained"] == 14 and config["model"]["sense_pairs"] == str(pairs)
    assert api.load(out).info["sense_pairs"] == "bank-pairs.tsv"  # what a WiC score's "zero-shot" mark reads
