"""Hours of use (issue 37, item 5): the built-in talk deck stepped through, over and over, in its window
while a pretraining run trains in the background (a tiny GPT on the BBC corpus, at the lower priority the app
gives its own runs): RSS, open files and threads sampled at the end of every pass through the deck. After
one pass (every step built and prepared), they should stay flat: RSS growth under 5%, the same threads and
files. Writes the section "Hours of use" of bench/robustness/RESULTS.md.

    QT_QPA_PLATFORM=offscreen python bench/robustness/talk_hours.py [--minutes 120] [--step-seconds 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402
from bench.robustness.memory import rss_mb  # noqa: E402
from bench.robustness.monkey import open_files, threads, wait  # noqa: E402


def every_ten(passes: list[tuple[float, float, int, int]]) -> list[tuple[float, float, int, int]]:
    """The first pass, then the first pass past each ten-minute mark, and the last."""
    picked, mark = [passes[0]], 10.0
    for row in passes[1:-1]:
        if row[0] >= mark:
            picked.append(row)
            mark = (row[0] // 10 + 1) * 10
    return picked + passes[-1:] if len(passes) > 1 else picked


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=120.0)
    p.add_argument("--step-seconds", type=float, default=3.0)
    args = p.parse_args()

    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])
    from explorer.pyside_imports import lighter_import_hook

    lighter_import_hook()  # as the app does
    from explorer.session import Session
    from explorer.talk.deck import load_deck
    from explorer.talk.window import EXPORT_SIZE, TalkWindow

    with tempfile.TemporaryDirectory() as tmp:
        training = subprocess.Popen(
            [sys.executable, "-m", "engine.cli", "gpt", "--preset", "tiny", "--corpus", "bbc-news", "--background",
             "--max-minutes", f"{args.minutes + 10:g}", "--max-steps", "1000000", "--out", str(Path(tmp) / "gpt")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        talk = TalkWindow(Session(), load_deck())
        talk.resize(EXPORT_SIZE)
        talk.show()
        began = time.monotonic()
        while not talk.all_ready and time.monotonic() - began < 600:
            wait(app, 0.5)
        prepared_s = time.monotonic() - began
        steps = len(talk.steps)
        passes: list[tuple[float, float, int, int]] = []  # (minutes, RSS MB, open files, threads) after each pass
        began = time.monotonic()
        while time.monotonic() - began < args.minutes * 60:
            for i in range(steps):
                talk.go(i)
                wait(app, args.step_seconds)
            passes.append(((time.monotonic() - began) / 60, rss_mb(), open_files(), threads()))
            print(f"pass {len(passes)} at {passes[-1][0]:.1f} min: RSS {passes[-1][1]:.0f} MB, "
                  f"{passes[-1][2]} files, {passes[-1][3]} threads", flush=True)
        still_training = training.poll() is None
        training.terminate()
        training.wait(60)
        talk.close()
    first, last = passes[0], passes[-1]
    growth = (last[1] - first[1]) / first[1] * 100
    body = f"""## Hours of use

`QT_QPA_PLATFORM=offscreen python bench/robustness/talk_hours.py --minutes {args.minutes:g} --step-seconds
{args.step_seconds:g}` ({machine()}): the built-in deck ({steps} steps, prepared in {prepared_s:.0f} s) stepped
through every {args.step_seconds:g} s for {args.minutes:g} minutes — {len(passes)} passes — beside a tiny GPT
pretraining on the BBC corpus at the app's lower priority ({'still training at the end' if still_training else
'it ended before the talk did'}).

| | after pass 1 | after pass {len(passes)} |
|---|---|---|
| RSS | {first[1]:,.0f} MB | {last[1]:,.0f} MB ({growth:+.1f}%) |
| open files | {first[2]} | {last[2]} |
| threads | {first[3]} | {last[3]} |

RSS, open files and threads about every ten minutes (minute: MB, files, threads): {'; '.join(f'{m:.0f}: {r:,.0f}, {f}, {t}' for m, r, f, t in every_ten(passes))}.
"""
    write_section("talk-hours", body)
    print(body)


if __name__ == "__main__":
    main()
