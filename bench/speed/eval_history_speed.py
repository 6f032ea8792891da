"""word2bert-eval along a run's history at the app's budget (issue 35, item 5): six BERT-tiny checkpoints
scored on senses, cloze and perplexity — a stated sample of held-out sentences, the same for every
checkpoint — in at most 2 minutes on 2 cores, and a re-run that reads every row from the cache.

A BERT run of the `tiny` preset is trained here for 12 steps on a slice of the default corpus with
--keep-every 2, so the six checkpoints are real run folders. Each command runs as a process, as a person
runs it, with its own empty cache folder.

    python bench/speed/eval_history_speed.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402
from bench.speed.scrubber_speed import make_run  # noqa: E402 (the same tiny BERT run, 12 steps here)


def timed(args: list[str], env: dict[str, str]) -> tuple[float, str, str]:
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "engine.cli.eval", *args], env=env, capture_output=True, text=True,
                          check=True)
    return time.perf_counter() - began, done.stdout, done.stderr


def main() -> None:
    from engine.handles.history import run_history
    from engine.inspection.history_scores import PERPLEXITY_SENTENCES

    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "WORD2BERT_CACHE": str(Path(tmp) / "cache")}
        run = make_run(Path(tmp), steps=12)
        steps = [k.step for k in run_history(run)]
        args = [str(run), "--all-checkpoints", "--tasks", "senses,cloze,perplexity", "--corpus", "default", "--json"]
        cold, out, err = timed(args, env)
        warm, again, _ = timed(args, env)
        assert again == out, "a re-run gave other scores"
    lines = [ln for ln in err.splitlines() if ln.strip()]
    body = f"""## word2bert-eval along a run (issue 35, item 5)

`python bench/speed/eval_history_speed.py` ({machine()}): a BERT run of the `tiny` preset (4 layers × 256), 12
steps with `--keep-every 2` = {len(steps)} checkpoints (steps {', '.join(map(str, steps))}); `word2bert-eval RUN
--all-checkpoints --tasks senses,cloze,perplexity --corpus default --json` as a process, an empty cache folder:

| | wall time |
|---|---|
| first run (every checkpoint scored: 176 sense sentences, 102 cloze items, pseudo-perplexity on the first {PERPLEXITY_SENTENCES} held-out sentences) | **{cold:.1f} s** (target ≤ 120 s) |
| the same command again (every row read from the cache folder) | **{warm:.1f} s** |

What it says on stderr while it works (first run): {' / '.join(lines[:3])} … {lines[-1] if lines else ''}
(before: nothing for 5.5–8.5 minutes, every held-out sentence of 2,873 scored per checkpoint, recomputed on a re-run).
"""
    write_section("eval-history", body)
    print(body)


if __name__ == "__main__":
    main()
