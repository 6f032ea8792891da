"""The GPU check's dry run: every step of bench/gpu_check.py on the CPU with a few steps each, so that
the one command kept for a GPU machine cannot rot between the sessions that have one."""

from bench import gpu_check


def test_the_gpu_check_runs_every_step_on_the_cpu_and_reports_its_figures(topic_corpus, tmp_path, capsys):
    rc = gpu_check.main(["--device", "cpu", "--quick", "--corpus", str(topic_corpus), "--out", str(tmp_path),
                         "--words", "piano,guitar"])
    summary = (tmp_path / "summary.md").read_text()
    rows = [line for line in summary.splitlines() if line.startswith("| ") and " | " in line[2:]]
    steps = {row.split(" | ")[0][2:]: row.split(" | ")[1] for row in rows if row.split(" | ")[1] in ("ok", "FAILED", "skipped")}
    assert rc == 0, summary
    for name in ("train-bert", "train-bert-resume", "train-gpt", "train-elmo", "train-word2vec", "train-glove",
                 "train-nnlm", "queries", "finetune-full", "finetune-frozen", "ddp", "fig-word2vec", "fig-elmo",
                 "fig-minilm", "profile-elmo", "fig-elmo-batch", "hf-architectures"):
        assert steps.get(name) == "ok", f"{name}: {steps.get(name)}\n{summary}"
    for figure in ("word2vec_sgns_cpu_eager", "elmo_tiny_train", "occurrences", "elmo_kernel_launches_per_step",
                   "elmo_tiny_2s_batch8_perplexity"):
        assert f"| {figure}" in summary or figure in summary, summary
    assert "Machine:" in summary and "device asked: cpu" in summary


def test_only_picks_steps_by_name_or_by_prefix_in_the_order_given():
    """A session names its steps: "fig-elmo" must not also run fig-elmo-batch (200 s of a 6-minute budget), nor
    "train-bert" its resume; a prefix that is no step's name ("train") picks every step it begins."""
    steps = [gpu_check.Step(name, 10, []) for name in
             ("tests", "train-bert", "train-bert-resume", "train-gpt", "fig-elmo", "fig-elmo-batch", "fig-minilm")]
    assert [s.name for s in gpu_check.only(steps, ["fig-elmo", "train-bert"])] == ["fig-elmo", "train-bert"]
    assert [s.name for s in gpu_check.only(steps, ["fig-minilm", "train"])] == \
        ["fig-minilm", "train-bert", "train-bert-resume", "train-gpt"]
    assert [s.name for s in gpu_check.only(steps, ["fig"])] == ["fig-elmo", "fig-elmo-batch", "fig-minilm"]
    assert gpu_check.only(steps, ["no-such-step"]) == []
