"""A run started in the background (``--background``, as the app starts its runs) yields the CPU to interactive
programs: nice 10 at least on POSIX, from its first instruction where the app starts it through ``nice``."""

import os
import subprocess
import sys

import pytest

from engine.api import background_launch
from engine.cli.runner import BACKGROUND_NICE

POSIX = os.name == "posix"
LOWERED = "from engine.cli.runner import lower_priority; lower_priority(); import os; print(os.getpriority(os.PRIO_PROCESS, 0))"


def _nice_after_lowering(start_at: int) -> int:
    out = subprocess.run([sys.executable, "-c", LOWERED], capture_output=True, text=True, check=True,
                         preexec_fn=lambda: os.nice(start_at))
    return int(out.stdout)


@pytest.mark.skipif(not POSIX, reason="nice values are POSIX's")
def test_a_background_run_goes_to_nice_10_and_one_started_lower_stays_there():
    base = os.getpriority(os.PRIO_PROCESS, 0)
    if base >= BACKGROUND_NICE:
        pytest.skip("this test process already runs at a background priority")
    assert _nice_after_lowering(0) == BACKGROUND_NICE  # from the caller's priority: lowered to 10
    assert _nice_after_lowering(12 - base) == 12  # started lower (the app starts its runs through nice): not 19


def test_the_apps_launch_command_starts_the_cli_in_the_background():
    program, args = background_launch("train", ["ngram", "--out", "x"])
    assert args[-4:] == ["ngram", "--out", "x", "--background"]
    if POSIX:  # lowered before Python starts, not 0.3 s later when the CLI has imported its modules
        assert os.path.basename(program) == "nice" and args[:3] == ["-n", str(BACKGROUND_NICE), sys.executable]
    with pytest.raises(ValueError):
        background_launch("eval", [])
