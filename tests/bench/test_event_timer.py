"""``chaos.py --events`` times every event the window delivers. PySide can hand its ``notify`` a wrapper left over
from an object deleted at the same address (a layout's item, another kind of event): the event still reaches its
receiver, is named by the receiver's real class, and nothing is raised."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The tab bar's own wrapper let go, and a wrapper of another class (a layout's item, not a QObject) left at its
# address: what PySide finds there when Qt delivers the bar's events, as after Qt deleted a layout item there.
STALE_RECEIVER = """
import shiboken6
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QTabWidget, QWidget, QWidgetItem
from bench.robustness.event_timer import TimedApplication

app = TimedApplication(["timed"])
tabs = QTabWidget()
tabs.addTab(QWidget(), "one")
tabs.addTab(QWidget(), "two")
bar = tabs.tabBar()
seen = []


class Seen(QObject):
    def eventFilter(self, obj, event):
        seen.append(event.type())
        return False


watcher = Seen()
bar.installEventFilter(watcher)
address = shiboken6.getCppPointer(bar)[0]
shiboken6.invalidate(bar)
stale = shiboken6.wrapInstance(address, QWidgetItem)
assert not isinstance(stale, QObject)
tabs.resize(400, 300)
tabs.show()
for _ in range(20):
    app.processEvents()
print("paints of QTabBar:", app.paints.get("QTabBar", [0])[0])
print("bar's events seen:", len(seen), QEvent.Type.Paint in seen)
"""


def test_a_stale_wrapper_for_the_receiver_still_gets_its_events_timed():
    done = subprocess.run([sys.executable, "-c", STALE_RECEIVER], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={**os.environ, "QT_QPA_PLATFORM": "offscreen",
                                         "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert "TypeError" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    painted = int(done.stdout.split("paints of QTabBar:")[1].split()[0])
    assert painted >= 1, done.stdout  # counted under the bar's real class, not the stale wrapper's
    assert "bar's events seen:" in done.stdout and done.stdout.rstrip().endswith("True"), done.stdout
