"""word2bert-train and word2bert-eval from the command line."""

import json

import pytest

from tests.engine.helpers import run, w2v_spec  # noqa: F401


def test_cli_train_then_eval_json(topic_corpus, tmp_path, capsys):
    from engine.cli.eval import eval_main
    from engine.cli.train import train_main

    out = tmp_path / "cli"
    rc = train_main(["word2vec", "--corpus", str(topic_corpus), "--out", str(out), "--arch", "skipgram", "--loss", "hs",
                     "--dim", "20", "--epochs", "2", "--min-count", "2", "--workers", "1"])
    assert rc == 0
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["model"]["sg"] == 1 and cfg["model"]["hs"] == 1 and cfg["model"]["vector_size"] == 20
    assert cfg["model"]["workers"] == 1
    capsys.readouterr()
    assert eval_main([str(out), "--tasks", "analogy,wordsim,simlex", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) >= {"analogy", "wordsim", "simlex"}
    assert 0 <= result["wordsim"]["coverage"] <= 1 and "accuracy" in result["analogy"]
    assert train_main(["word2vec", "--corpus", "/no/such", "--out", str(tmp_path / "x")]) == 2
    capsys.readouterr()
    with pytest.raises(SystemExit):  # KIND --help lists the family's settings
        train_main(["word2vec", "--help"])
    said = " ".join(capsys.readouterr().out.split())  # (argparse wraps its lines)
    assert "--workers WORKERS threads of the CPU kernel (gensim's name)" in said  # what a setting does, not a bare
    assert "--window WINDOW (default 5)" in said  # default (the Pretrain form's tooltips said it; the CLI did not)
    assert train_main(["gpt", "--out", str(tmp_path / "y"), "--hidden", "100", "--heads", "3"]) == 2
    assert "hidden (100) must be a multiple of heads (3)" in capsys.readouterr().err
    assert not (tmp_path / "y").exists()


def test_eval_scores_the_bundled_cloze_and_sense_sets(contextual_runs, capsys):
    from engine.cli.eval import eval_main

    assert eval_main([str(contextual_runs["bert"][0]), "--tasks", "cloze,senses", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["cloze"]["cloze_items"] >= 60 and 0 <= result["cloze"]["cloze_top10"] <= 1
    assert len(result["senses"]["by_layer"]) == 3 and result["senses"]["best"] == max(result["senses"]["by_layer"])
    assert eval_main([str(contextual_runs["gpt"][0]), "--tasks", "cloze", "--json"]) == 0
    assert "fill [MASK]" in json.loads(capsys.readouterr().out)["cloze"]["skipped"]
    assert eval_main([str(contextual_runs["gpt"][0]), "--tasks", "nonsense"]) == 2


def test_ctrl_c_before_training_began_stops_at_once_with_nothing_to_save(tmp_path, capsys):
    import os
    import signal
    import threading

    from engine.cli.runner import run_events
    from engine.training.events import RunStarted

    stop = threading.Event()
    reached: list[str] = []

    def events():
        reached.append("reading the corpus")
        os.kill(os.getpid(), signal.SIGINT)  # the user's Ctrl-C (or the app's Stop) while the corpus is read
        reached.append("tokenizing")  # never reached: the stop is at once
        yield RunStarted(str(tmp_path), "bert", "cpu", 1.0, "tokens", 0, {})

    before = signal.getsignal(signal.SIGINT)
    code = run_events(events, stop, prog="word2bert-train", json_events=True, aborted="", run_dir=str(tmp_path))
    out = capsys.readouterr()
    assert code == 4 and reached == ["reading the corpus"] and stop.is_set()  # stopped, not completed
    assert '"status": "stopped"' in out.out and "nothing to save" in out.err
    assert signal.getsignal(signal.SIGINT) == before  # the handler is given back


def test_the_command_as_a_process_exits_with_its_code_and_every_event_printed(topic_corpus, tmp_path):
    """``python -m engine.cli`` (the console scripts' path) leaves without module teardown: its JSON
    events must still all reach a pipe, and a failure must still exit 2."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = tmp_path / "proc"
    done = subprocess.run([sys.executable, "-m", "engine.cli", "word2vec", "--corpus", str(topic_corpus), "--out",
                           str(out), "--dim", "10", "--epochs", "1", "--min-count", "2", "--workers", "1",
                           "--json-events"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert events[0] == {"event": "ready"}  # its first line: from here on a Stop (Ctrl-C) is caught
    assert events[1]["event"] == "started" and events[-1]["event"] == "finished"
    assert events[-1]["status"] == "completed"
    failed = subprocess.run([sys.executable, "-m", "engine.cli", "word2vec", "--corpus", "/no/such", "--out",
                             str(tmp_path / "x")], env=env, capture_output=True, text=True, timeout=300)
    assert failed.returncode == 2 and "/no/such" in failed.stderr


def test_a_stop_while_the_command_starts_is_not_lost(topic_corpus, tmp_path):
    """The app's Stop right after Start reaches the process while torch imports: the run must stop (it
    said "completed" when a library swallowed the KeyboardInterrupt)."""
    import os
    import signal
    import subprocess
    import sys

    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "word2vec", "--corpus", str(topic_corpus), "--out",
                             str(tmp_path / "run"), "--dim", "10", "--epochs", "500", "--min-count", "2", "--json-events"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # as the app does: the Stop goes as soon as the command says it is ready, while the rest of its imports (the
    # family's model code, torch where it needs it) are still under way (on a machine without a GPU word2vec
    # imports no torch and is training within a second: 500 epochs keep it from finishing first)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert json.loads(first) == {"event": "ready"}
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert proc.returncode == 4, err[-2000:]  # a script tells a stopped run from a completed one
    assert events and events[-1]["event"] == "finished" and events[-1]["status"] == "stopped"
    from engine.data.corpora import cache_dir

    # the corpus was being read into word ids by a second process (engine.data.prefetch): ended, cleaned up
    assert not list((cache_dir() / "prefetch").glob("ids-*"))


def test_cli_budget_schedule_decays_the_rate_by_the_cpu_clock(topic_corpus, tmp_path, capsys, monkeypatch):
    """--max-minutes M --budget-clock cpu --budget-schedule: the rate follows the CPU time spent, not the steps."""
    from engine.cli.train import train_main
    from engine.training import budget
    from engine.training.events import read_metrics

    spent = iter([0.0] * 12 + [0.99] * 1000)  # a budget nearly spent after the warm-up steps
    monkeypatch.setattr(budget.Budget, "fraction", lambda self: next(spent))
    tiny = ["--hidden", "32", "--layers", "1", "--heads", "2", "--intermediate", "64", "--seq-len", "32",
            "--vocab-size", "200", "--batch-size", "8", "--warmup", "2", "--lr", "1e-3", "--log-every", "1"]
    out = tmp_path / "b"
    rc = train_main(["bert", "--corpus", str(topic_corpus), "--out", str(out), "--max-steps", "30", "--max-minutes", "60",
                     "--budget-clock", "cpu", "--budget-schedule", *tiny])
    assert rc == 0
    rates = [e.lr for e in read_metrics(out) if getattr(e, "lr", None) is not None]
    assert rates[-1] == pytest.approx(1e-5, rel=0.01)  # 1% of the rate left; by steps alone it would be ~3%
    capsys.readouterr()
    assert train_main(["bert", "--corpus", str(topic_corpus), "--out", str(tmp_path / "c"), "--budget-schedule", *tiny]) == 2
    assert "needs a budget" in capsys.readouterr().err


def test_a_resumed_run_keeps_its_budget_schedule_and_what_it_spent(topic_corpus, tmp_path, monkeypatch):
    """Ctrl-C during a --budget-schedule run, then a plain --resume: the same budget and clock, counting
    what the first session used (the learning rate carries on down instead of starting over)."""
    import threading

    from engine import api
    from engine.checkpoints.reading import read_training_state
    from engine.cli.train import train_main
    from engine.config.settings import model_config
    from engine.training import loop

    out = tmp_path / "b"
    stop = threading.Event()
    model = model_config("bert", hidden=32, layers=1, heads=2, intermediate=64, seq_len=32, vocab_size=200,
                         batch_size=8, warmup=2)
    spec = api.RunSpec("bert", out=str(out), corpus=str(topic_corpus), model=model, max_steps=30, max_minutes=60,
                       budget_clock="cpu", budget_schedule=True, log_every=1)
    for event in api.train(spec, stop=stop):
        if getattr(event, "step", 0) >= 3:
            stop.set()
    saved = read_training_state(out)["budget"]
    assert saved["seconds"] == 3600 and saved["clock"] == "cpu" and saved["used_s"] > 0
    made = []
    real = loop.cpu_budget
    monkeypatch.setattr(loop, "cpu_budget", lambda *a: made.append(a) or real(*a))
    assert train_main(["--resume", str(out)]) == 0
    assert len(made) == 1 and made[0][0] == 3600 and made[0][2] == saved["used_s"]
    assert read_training_state(out)["budget"]["used_s"] > saved["used_s"]


def test_cli_trains_a_tuned_lens_for_a_model_named_with_model(contextual_runs, topic_corpus, tmp_path, capsys):
    """word2bert-train tuned-lens --model M: M is a name or folder (a text setting, not a number as --dim is)."""
    from engine.cli.train import train_main

    out = tmp_path / "lens"
    rc = train_main(["tuned-lens", "--model", str(contextual_runs["gpt"][0]), "--corpus", str(topic_corpus),
                     "--out", str(out), "--max-steps", "6", "--batch-size", "8", "--eval-every", "6"])
    assert rc == 0, capsys.readouterr().err
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["kind"] == "tuned-lens" and cfg["base"] == str(contextual_runs["gpt"][0].resolve())
    assert cfg["metrics"]["kl_tuned"] > 0 and "kl_logit_layer_0" in cfg["metrics"]


def test_eval_scores_how_readable_each_layer_is(contextual_runs, topic_corpus, capsys):
    """--tasks lens: per layer, the KL from the output and the share of tokens whose top word is already
    the output's, over the first held-out sentences (the output itself: 0 and all of them)."""
    from engine.cli.eval import eval_main

    assert eval_main([str(contextual_runs["gpt"][0]), "--tasks", "lens", "--corpus", str(topic_corpus), "--json"]) == 0
    lens = json.loads(capsys.readouterr().out)["lens"]
    assert lens["sentences"] > 0 and len(lens["kl_by_layer"]) == 3  # embeddings, layer 1, output
    assert lens["kl_by_layer"][-1] == 0 and lens["agreement_by_layer"][-1] == 1
    assert all(r is None or r >= 1 for r in lens["median_rank_by_layer"])
