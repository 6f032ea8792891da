"""Fine-tuning: heads, strategies, metrics, run folders, bad input (tiny models, seconds on a CPU)."""

import json
import random

import numpy as np
import pytest
import torch

from engine import api
from engine.api import finetune
from engine.data.tasks import DataError, load_task
from engine.errors import Word2BertError
from engine.finetune import metrics as task_metrics
from engine.finetune.batches import tensorize
from engine.finetune.encoders import encoder_from_handle
from engine.finetune.recipe import apply_strategy
from engine.finetune.spec import FinetuneSpec
from engine.models.task_heads import FinetuneModel
from tests.conftest import FRAMES, TOPICS


def topic_rows(n, seed=0):
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        topic = rng.choice(list(TOPICS))
        rows.append((rng.choice(FRAMES[topic]).format(rng.choice(TOPICS[topic])), topic))
    return rows


@pytest.fixture(scope="module")
def topic_tsv(tmp_path_factory):
    path = tmp_path_factory.mktemp("tasks") / "topics.tsv"
    path.write_text("text\tlabel\n" + "".join(f"{t}\t{lab}\n" for t, lab in topic_rows(150)), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def topic_conll(tmp_path_factory):
    lines = []
    for text, topic in topic_rows(80, seed=1):
        for word in text.split():
            lines.append(f"{word}\t{'B-' + topic.upper() if word in TOPICS[topic] else 'O'}")
        lines.append("")
    path = tmp_path_factory.mktemp("tasks") / "topics.conll"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def topic_squad(tmp_path_factory):
    items = []
    for text, topic in topic_rows(60, seed=2):
        word = next(w for w in text.split() if w in TOPICS[topic])
        items.append({"question": f"which {topic} is it?", "context": text,
                      "answers": [{"text": word, "answer_start": text.index(word)}]})
    path = tmp_path_factory.mktemp("tasks") / "topics.json"
    path.write_text(json.dumps({"data": [{"paragraphs": [{"context": i["context"], "qas": [i]} for i in items]}]}))
    return path


def tiny(run, task, out, **kw):
    settings = {"epochs": 2, "batch_size": 16, "max_len": 32, "log_every": 2}
    return FinetuneSpec(model=str(run), task=str(task), out=str(out), **{**settings, **kw})


def network_of(contextual_runs, kind):
    handle = api.load(contextual_runs[kind][0])
    return handle, encoder_from_handle(handle)


def on_encoders_device(model, encoder):
    """A fine-tuning model where its encoder is (the GPU where there is one), as the recipe puts it."""
    return model.to(next(encoder.network.parameters()).device)


@pytest.mark.parametrize("family", ["classify", "tag", "span"])
def test_each_head_gives_shapes_and_a_finite_loss(contextual_runs, family, topic_tsv, topic_conll, topic_squad):
    _, encoder = network_of(contextual_runs, "bert")
    task = load_task({"classify": topic_tsv, "tag": topic_conll, "span": topic_squad}[family])
    n_labels = max(len(task.labels), 1)
    model = on_encoders_device(FinetuneModel(encoder, family, n_labels), encoder)
    data = tensorize(encoder, task.train[:4], family, task.labels, 32).to(device_of(model))
    batch = data.batch(np.arange(4))
    out = model(batch)
    b, t = batch["ids"].shape
    if family == "classify":
        assert out["logits"].shape == (4, 3)
    elif family == "tag":
        assert out["logits"].shape == (b, t, n_labels)
    else:
        assert out["start"].shape == out["end"].shape == (b, t)
    assert out["loss"].dim() == 0 and torch.isfinite(out["loss"])
    out["loss"].backward()
    assert any(p.grad is not None for p in model.head.parameters())


def device_of(model):
    """Where the model's weights are (the GPU where there is one): its inputs go there too."""
    return next(model.parameters()).device


def _train_steps(model, data, steps=4):
    data.to(device_of(model))
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-2)
    model.train()
    for _ in range(steps):
        loss = model(data.batch(np.arange(8)))["loss"]
        opt.zero_grad()
        loss.backward()
        opt.step()


def test_frozen_strategy_leaves_encoder_bit_identical_while_head_learns(contextual_runs, topic_tsv):
    _, encoder = network_of(contextual_runs, "bert")
    task = load_task(topic_tsv)
    model = on_encoders_device(FinetuneModel(encoder, "classify", 3), encoder)
    apply_strategy(model, "frozen", None)
    before = {k: v.clone() for k, v in encoder.network.state_dict().items()}
    head_before = model.head.out.weight.clone()
    _train_steps(model, tensorize(encoder, task.train[:8], "classify", task.labels, 32))
    after = encoder.network.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert not torch.equal(head_before, model.head.out.weight)


def test_top_n_freezes_exactly_the_bottom_layers(contextual_runs, topic_tsv):
    _, encoder = network_of(contextual_runs, "bert")  # 2 layers
    model = on_encoders_device(FinetuneModel(encoder, "classify", 3), encoder)
    apply_strategy(model, "top-1", 1)
    learns = {name: p.requires_grad for name, p in encoder.network.named_parameters()}
    assert not any(v for k, v in learns.items() if k.startswith(("token_emb", "position_emb", "segment_emb", "emb_norm")))
    assert not any(v for k, v in learns.items() if k.startswith("layers.0."))
    assert all(v for k, v in learns.items() if k.startswith("layers.1."))
    assert learns["pooler.weight"]
    task = load_task(topic_tsv)
    before = {k: v.clone() for k, v in encoder.network.state_dict().items()}
    _train_steps(model, tensorize(encoder, task.train[:8], "classify", task.labels, 32))
    after = encoder.network.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before if k.startswith(("layers.0.", "token_emb")))
    assert not torch.equal(before["layers.1.ffn_out.weight"], after["layers.1.ffn_out.weight"])


def test_from_scratch_differs_from_pretrained_at_step_zero(contextual_runs):
    _, pretrained = network_of(contextual_runs, "bert")
    _, encoder = network_of(contextual_runs, "bert")
    model = FinetuneModel(encoder, "classify", 3)
    apply_strategy(model, "scratch", None)
    a, b = pretrained.network.state_dict(), encoder.network.state_dict()
    assert not torch.equal(a["token_emb.weight"], b["token_emb.weight"])
    assert not torch.equal(a["layers.0.query.weight"], b["layers.0.query.weight"])
    assert a.keys() == b.keys() and all(a[k].shape == b[k].shape for k in a)


def test_entity_f1_matches_a_hand_computed_example():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O", "B-PER"]]
    pred = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "O", "O"]]
    # gold entities: PER(0-1), LOC(3), ORG(0), PER(2) = 4; predicted: PER(0-1), ORG(3), ORG(0) = 3; correct: 2
    scores = task_metrics.entity_scores(gold, pred)
    precision, recall = 2 / 3, 2 / 4
    assert scores["entity_f1"] == pytest.approx(2 * precision * recall / (precision + recall))
    assert scores["per_type_f1"]["PER"] == pytest.approx(2 * 1 * 0.5 / 1.5)
    assert scores["per_type_f1"]["LOC"] == 0
    assert task_metrics.entities(["I-PER", "I-PER", "B-PER"]) == {("PER", 0, 1), ("PER", 2, 2)}


def test_span_decoding_never_puts_the_end_before_the_start():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(2, 40))
        start, end = rng.normal(size=n), rng.normal(size=n)
        end[: n // 2] += 5  # tempt the decoder to end early
        allowed = rng.random(n) < 0.7
        allowed[int(rng.integers(n))] = True
        s, e, _ = task_metrics.best_span(start, end, allowed)
        assert s <= e and allowed[s] and allowed[e]


def test_finetuned_run_folder_loads_and_classifies(contextual_runs, topic_tsv, tmp_path):
    events = list(finetune(tiny(contextual_runs["bert"][0], topic_tsv, tmp_path / "ft", epochs=4,
                                probes=["she played the violin on stage"])))
    finished = events[-1]
    assert finished.status == "completed"
    evals = [e for e in events if type(e).__name__ == "EvalMetrics"]
    probes = [e for e in events if type(e).__name__ == "ProbePredictions"]
    assert len(evals) >= 3 and len(probes) >= 3
    best = max(e.metrics["accuracy"] for e in evals)
    handle = api.load(tmp_path / "ft")
    assert api.Capability.CLASSIFY in handle.capabilities
    result = handle.classify("he drove the truck to town")
    assert set(result.labels) == {"fruit", "music", "vehicle"} and abs(sum(result.probs) - 1) < 1e-4
    assert handle.info["task"] == "topics"
    report = api.finetune_report(tmp_path / "ft")
    assert np.array(report["confusion_matrix"]).sum() == len(load_task(topic_tsv).validation)
    assert np.array(report["confusion_matrix"]).shape == (3, 3)
    assert json.loads((tmp_path / "ft" / "config.json").read_text())["metrics"]["accuracy"] == pytest.approx(best)
    with pytest.raises(api.Unsupported):
        handle.tag("he drove")


def test_a_stopped_run_keeps_its_best_checkpoint_and_resumes(contextual_runs, topic_tsv, tmp_path):
    import threading

    stop = threading.Event()
    out = tmp_path / "ft"
    events = []
    for ev in finetune(tiny(contextual_runs["bert"][0], topic_tsv, out, epochs=3), stop=stop):
        events.append(ev)
        if type(ev).__name__ == "StepMetrics" and ev.step >= 4:
            stop.set()
    assert events[-1].status == "stopped"
    assert set(api.load(out).classify("a ripe mango").labels) == {"fruit", "music", "vehicle"}
    resumed = list(finetune(FinetuneSpec(model="", task="", out=str(out), resume=True)))
    assert resumed[0].resumed_step == events[-1].step
    assert resumed[-1].status == "completed"


@pytest.mark.parametrize("kind", ["gpt", "elmo"])
def test_gpt_and_elmo_fine_tune_and_load(contextual_runs, topic_tsv, tmp_path, kind):
    extra = {"lm_weight": 0.5} if kind == "gpt" else {"strategy": "frozen"}
    events = list(finetune(tiny(contextual_runs[kind][0], topic_tsv, tmp_path / kind, max_steps=6, **extra)))
    assert events[-1].status == "completed"
    result = api.load(tmp_path / kind).classify("the old bus needs new wheels")
    assert set(result.labels) == {"fruit", "music", "vehicle"} and abs(sum(result.probs) - 1) < 1e-4


def test_elmo_frozen_learns_its_scalar_mix(contextual_runs, topic_tsv, tmp_path):
    list(finetune(tiny(contextual_runs["elmo"][0], topic_tsv, tmp_path / "e", max_steps=8, strategy="frozen", lr=5e-2)))
    weights = json.loads((tmp_path / "e" / "config.json").read_text())["encoder"]["layer_weights"]
    assert len(weights) == 3 and max(abs(w - 1 / 3) for w in weights) > 1e-3  # the mix learned


def test_tagging_and_spans_train_and_answer(contextual_runs, topic_conll, topic_squad, tmp_path):
    tagged = list(finetune(tiny(contextual_runs["bert"][0], topic_conll, tmp_path / "tag", lr=3e-3, epochs=4)))
    assert "entity_f1" in tagged[-2].metrics if type(tagged[-2]).__name__ == "EvalMetrics" else True
    tagging = api.load(tmp_path / "tag").tag("she peeled the mango for lunch")
    assert tagging.words[3] == "mango" and len(tagging.tags) == 6
    report = api.finetune_report(tmp_path / "tag")
    assert "FRUIT" in report["per_type_f1"]
    list(finetune(tiny(contextual_runs["bert"][0], topic_squad, tmp_path / "span", max_steps=4)))
    answer = api.load(tmp_path / "span").answer("which fruit is it?", "i ate a ripe mango today")
    assert answer.text and "i ate a ripe mango today"[answer.start : answer.end] == answer.text


def test_builtin_datasets_have_fixed_splits_and_names():
    bbc = load_task("bbc-topics")
    assert bbc.labels == ("business", "entertainment", "politics", "sport", "tech")
    assert len(bbc.train) + len(bbc.validation) == 2225
    assert load_task("bbc-topics").validation[0] == bbc.validation[0]
    polarity = load_task("polarity")
    assert polarity.labels == ("negative", "positive") and len(polarity.validation) == 40
    ner = load_task("twitter-ner")
    assert ner.family == "tag" and "B-person" in ner.labels and ner.labels[0] == "O"


@pytest.mark.parametrize("content, message", [
    ("text\tcolour\nhello\tred\n", "no label column"),
    ("just one column\nanother line\n", "no label column"),
    ("", "empty"),
    ("text,label\n" + "good film,pos\nbad film,neg\n" * 5 + "odd one,weird\n", "only one example"),
])
def test_bad_files_get_a_clear_message(tmp_path, content, message):
    path = tmp_path / ("data.tsv" if "\t" in content else "data.csv")
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=message):
        load_task(path)


def test_unknown_validation_label_and_non_utf8_are_refused(tmp_path):
    train, val = tmp_path / "train.csv", tmp_path / "val.csv"
    train.write_text("text,label\n" + "good,pos\nbad,neg\n" * 3, encoding="utf-8")
    val.write_text("text,label\nmeh,neutral\n", encoding="utf-8")
    with pytest.raises(DataError, match="never seen in training: 'neutral'"):
        load_task(train, val)
    latin = tmp_path / "latin.csv"
    latin.write_bytes("text,label\ncaf\xe9 noir,pos\n".encode("latin-1"))
    with pytest.raises(DataError, match="not UTF-8 text \\(line 2"):
        load_task(latin)


def test_long_examples_are_truncated_and_counted(contextual_runs, tmp_path):
    path = tmp_path / "long.csv"
    long_text = " ".join(["apple banana cherry"] * 40)
    path.write_text("text,label\n" + "".join(f"{long_text},a\nshort one,b\n" for _ in range(5)), encoding="utf-8")
    started = next(iter(finetune(tiny(contextual_runs["bert"][0], path, tmp_path / "out", max_steps=1))))
    assert started.info["truncated"] == 5
    assert any("longer than 32 tokens" in n for n in started.info["notes"])


def test_bad_settings_and_foreign_bases_are_refused(contextual_runs, topic_tsv, tmp_path):
    with pytest.raises(Word2BertError, match="strategy must be"):
        next(finetune(tiny(contextual_runs["bert"][0], topic_tsv, tmp_path / "a", strategy="half")))
    with pytest.raises(Word2BertError, match="no dataset"):
        next(finetune(tiny(contextual_runs["bert"][0], "no-such-task", tmp_path / "b")))


def test_cli_fine_tunes_and_reports(contextual_runs, topic_tsv, tmp_path, capsys):
    from engine.cli.finetune import finetune_main

    code = finetune_main(["--model", str(contextual_runs["bert"][0]), "--task", str(topic_tsv), "--out",
                          str(tmp_path / "cli"), "--max-steps", "3", "--batch-size", "8", "--max-len", "32",
                          "--json-events", "--probe", "a ripe mango"])
    assert code == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[0]["event"] == "started" and lines[-1]["event"] == "finished"
    assert any(x["event"] == "probes" for x in lines)
    assert finetune_main(["--model", "x", "--task", "y", "--out", str(tmp_path / "z"), "--strategy", "top-x"]) == 2


def test_hugging_face_checkpoint_fine_tunes_top_layers(topic_tsv, tmp_path):
    events = list(finetune(FinetuneSpec(model="all-minilm-l6-v2", task=str(topic_tsv), out=str(tmp_path / "hf"),
                                        strategy="top-2", max_steps=2, batch_size=8, max_len=32)))
    assert events[0].info["frozen_parameters"] > 0 and events[-1].status == "completed"
    assert api.load(tmp_path / "hf").classify("a juicy peach from the market").labels


def test_curves_of_pretrained_and_scratch_runs_overlay_and_round_trip(contextual_runs, topic_tsv, tmp_path):
    outs = []
    for strategy in ("full", "scratch"):
        out = tmp_path / strategy
        events = list(finetune(tiny(contextual_runs["bert"][0], topic_tsv, out, strategy=strategy, eval_every=3)))
        outs.append((out, [e for e in events if isinstance(e, api.EvalMetrics)]))
    curves = api.curves_from_runs([o for o, _ in outs], made_by="the test")
    assert curves.metric == "accuracy" and curves.task == "topics.tsv"
    assert [c.strategy for c in curves.runs] == ["full", "scratch"]
    assert "from scratch" in curves.runs[1].label and "pretrained" in curves.runs[0].label
    for curve, (_, evals) in zip(curves.runs, outs, strict=True):
        assert curve.values == [e.metrics["accuracy"] for e in evals]  # every validation, in order
        assert curve.examples == [e.step * 16 for e in evals]  # examples seen = step × batch size
    saved = tmp_path / "curves.json"
    saved.write_text(curves.to_json(), encoding="utf-8")
    again = api.read_curves(saved)
    assert again.runs == curves.runs and again.made_by == "the test"
    assert api.read_curves(outs[0][0]).runs == curves.runs[:1]  # a run folder reads as its own curve


@pytest.mark.parametrize("content, message", [
    ("[1, 2]", "needs a non-empty list"),
    ('{"runs": []}', "needs a non-empty list"),
    ('{"runs": [{"examples": [1, 2], "values": [0.5]}]}', "differ in length"),
    ('{"runs": [{"examples": [1, "x"], "values": [0.5, 0.6]}]}', "list of at most"),
    ('{"runs": [{"examples": [1], "values": [NaN]}]}', "list of at most"),
    ("{not json", "not a curves file"),
])
def test_malformed_curves_files_get_a_clear_message(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(api.CheckpointError, match=message):
        api.read_curves(path)
    with pytest.raises(api.CheckpointError, match="shipped"):
        api.read_curves(tmp_path / "missing.json")
