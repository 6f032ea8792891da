"""The pretraining launcher: pick a model family, a preset and a corpus, press Start, and watch the loss
(and the held-out metrics) grow live; runs overlay, any can be hidden; Stop saves a resumable run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, cast

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from explorer.failures import explain
from explorer.panels.shown_runs import ShownRuns
from explorer.session import Session
from explorer.tasks import TaskRunner
from explorer.training_process import ProcessTrainJob, retire
from explorer.widgets.progress_bar import ProgressBar
from explorer.widgets.run_monitor import SPEED, RunMonitor, finished_text
from explorer.widgets.settings_form import SettingsForm


def _fmt_eta(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "--:--"
    s = int(seconds)
    return f"{s // 60}:{s % 60:02d}"


def default_steps(kind: str) -> int:
    """The Max steps a family opens with, as its declaration says: none for the fast static ones (300
    word2vec steps are a third of a second: the run would stop before its vectors mean anything), 300 for
    the gradient-trained networks."""
    from engine import api

    return api.default_steps(kind)


class TrainPanel(QWidget):
    explore = Signal(str)  # "Open in the explorer": the run folder, to load and show in the view its family is for

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        from engine import api

        super().__init__(parent)
        self.session = session
        self.job: ProcessTrainJob | None = None
        self.run_name = ""
        self.run_dir = ""
        self.kind = QComboBox()
        self.kind.addItems(api.model_kinds())
        self.kind.setCurrentText("gpt")
        self.preset = QComboBox()
        self.preset.setToolTip("The family's size: its architecture and how it trains")
        self.corpus = QComboBox(editable=True)
        self.corpus.addItems(api.corpora())
        browse = QPushButton("File…")
        browse.clicked.connect(self._browse)
        corpus_row = QHBoxLayout()
        corpus_row.addWidget(self.corpus, 1)
        corpus_row.addWidget(browse)
        self.steps = QSpinBox(minimum=0, maximum=10_000_000, value=default_steps("gpt"), singleStep=100)
        self.steps.setSpecialValueText("whole epochs")
        self._auto_steps = self.steps.value()  # the cap the family chose; a cap typed by hand stays
        self.device = QComboBox()
        self.device.addItems(["auto", "cpu", "cuda", "mps"])
        self.auto_device = "cpu"  # what "auto" means here, until the window has asked torch (set_auto_device)
        self.start = QPushButton("Start")
        self.stop = QPushButton("Stop")
        self.stop.setEnabled(False)
        self.open_run = QPushButton("Open in the explorer")
        self.open_run.setEnabled(False)
        self.resume = QPushButton("Resume")
        self.resume.setEnabled(False)
        self.load_curves = QPushButton("Show a run's curves…")
        self.progress = ProgressBar(maximum=1000)
        self.status = QLabel("Choose a model and a corpus, then Start.")
        self.status.setWordWrap(True)
        self.notes = QLabel()  # the run's own notes, kept while it trains (the status line changes every step)
        self.notes.setWordWrap(True)
        self.notes.setVisible(False)
        form = QFormLayout()
        form.addRow("Model", self.kind)
        form.addRow("Preset", self.preset)
        form.addRow("Corpus", corpus_row)
        form.addRow("Max steps", self.steps)
        form.addRow("Device", self.device)
        self.settings = SettingsForm()
        self.settings.changed.connect(self._settings_changed)
        self.settings.folder_set.connect(lambda name, value: self._read_earlier(value) if name == "init_from" else None)
        self._earlier = TaskRunner(self)  # reads how a run to go on from learned (its config.json)
        self._earlier.finished.connect(self._earlier_read)
        self.settings_title = QLabel()
        self.settings_title.setWordWrap(True)  # (a GPU's note makes it long: it wraps, the plots keep their width)
        buttons = QHBoxLayout()
        for b in (self.start, self.stop, self.resume):
            buttons.addWidget(b)
        more = QVBoxLayout()  # one a row: side by side they set the column's width at a talk's zoom
        more.addWidget(self.open_run)
        more.addWidget(self.load_curves)
        self.monitor = RunMonitor("held-out", SPEED, examples_axis=False)
        self.runs = self.monitor.runs
        self.loss_plot, self.eval_plot = self.monitor.loss_plot, self.monitor.eval_plot
        self.speed_plot = self.monitor.extra_plot
        left = QVBoxLayout()
        left.addLayout(form)
        left.addWidget(self.settings_title)
        left.addWidget(self.settings, 2)
        left.addLayout(buttons)
        left.addLayout(more)
        left.addWidget(self.progress)
        left.addWidget(self.status)
        left.addWidget(self.notes)
        left.addWidget(QLabel("Runs (untick to hide):"))
        left.addWidget(self.runs, 1)
        left_widget = QWidget()
        left_widget.setLayout(left)
        plots = self.monitor
        plots.setSizes([450, 300, 200])
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left_widget)
        split.addWidget(plots)
        split.setSizes([300, 700])
        QVBoxLayout(self).addWidget(split)
        self.kind.currentTextChanged.connect(self._kind_changed)
        self.preset.currentTextChanged.connect(lambda p: self.settings.apply_preset(p, self.device_type()))
        self.device.currentTextChanged.connect(lambda _: self._device_changed())
        self._kind_changed(self.kind.currentText())
        self.start.clicked.connect(self.start_run)
        self.stop.clicked.connect(self.stop_run)
        self.open_run.clicked.connect(lambda: self.explore.emit(self.run_dir))
        self.resume.clicked.connect(self.resume_run)
        self.load_curves.clicked.connect(self._choose_curves)
        # runs shown from their folders (a finished run re-plotted, one training elsewhere followed)
        self.shown_runs = ShownRuns(
            self.monitor, self, lambda: {self.run_name} if self.run_name else set(),
            lambda name, kind: f"{name} is a fine-tuning run: the Fine-tune tab's “Show a run's curves…” draws it"
            if kind == "finetune" else None)
        self.shown_runs.message.connect(self.status.setText)
        self.shown_runs.ended.connect(self.session.add_run)
        self.follower = self.shown_runs.follower

    def _kind_changed(self, kind: str) -> None:
        """The settings form follows the model family (and its size preset)."""
        presets, current = self._presets(kind), self.preset.currentText() or "tiny"
        self.preset.blockSignals(True)
        self.preset.clear()
        self.preset.addItems(presets)
        if current in presets:
            self.preset.setCurrentText(current)
        self.preset.blockSignals(False)
        self.preset.setEnabled(bool(presets))
        self.settings.set_kind(kind, self._preset(kind), hidden=("preset",), device=self.device_type())
        if self.steps.value() == self._auto_steps:
            self._auto_steps = default_steps(kind)
            self.steps.setValue(self._auto_steps)
        self._title(kind)

    def go_on_from(self, kind: str, source: str) -> None:
        """A run of ``kind`` to go on pretraining from ``source`` (the library's right-click): the family and
        init_from set, the corpus left to choose."""
        self.kind.setCurrentText(kind)
        self.settings.set_values({"init_from": source})
        self.settings.bring_into_view("init_from")
        self.status.setText(f"Goes on from {source}: its weights, its vocabulary and its architecture. Choose the "
                            "text to go on with as the corpus, then Start.")
        self._read_earlier(source)

    def _read_earlier(self, source: str) -> None:
        """The run to go on from, read off the window's thread: the form then shows its architecture (which the
        run takes) and how it learned (masking, dropout, window length: for the user to keep or change)."""
        from engine import api

        kind = self.kind.currentText()
        if not source.strip():  # none any more: its architecture is the form's to set again
            self._earlier.cancel()
            self._hold({})
            return
        self._earlier.submit(lambda: (kind, source, api.kept_settings(kind, source, architecture=True),
                                      api.kept_settings(kind, source), api.continuable_family(source),
                                      api.source_problem(kind, source)))

    def _earlier_read(self, result: object) -> None:
        from engine import api

        kind, source, taken, kept, family, problem = cast(
            tuple[str, str, dict[str, Any], dict[str, Any], str | None, str], result)
        if kind != self.kind.currentText() or self.settings.values().get("init_from") != source:
            return  # (another family or another run chosen since)
        if family is not None and family != kind:  # a run goes on in its own family: the form follows it
            self.go_on_from(family, source)
            self.status.setText(f"{self.status.text()} The model is now {family}: {Path(source).name or source} "
                                f"is a {family} run (a {kind} run cannot go on from it).")
            return
        if not kept:  # no run to go on from: what the run would say, now
            self._hold({})
            if problem:
                self.status.setText(f"Cannot go on from {source}: {problem.removeprefix('init_from: ')}")
            return
        self.settings.set_values(taken)
        name = Path(source).name or source
        self._hold({key: f"Taken from {name}: a run that goes on from it has its architecture."
                    for key in taken if key not in kept}, name)
        text = self.status.text()
        told = text if text.startswith(f"Goes on from {source}:") else f"Goes on from {source}."
        self.status.setText(f"{told} It learns as {name} did: {api.said_settings(kept)} "
                            "(change them here to train otherwise).")

    def _hold(self, held: dict[str, str], name: str = "") -> None:
        """The form's fields that a run to go on from decides, greyed with why (none: the form's again); the
        preset then sets only the rest, and says so."""
        self.settings.hold(held)
        self.preset.setToolTip(f"{name} decides the architecture: a preset sets the rest (learning rate, batch "
                               "size, …)" if held else "The family's size: its architecture and how it trains")

    def device_type(self) -> str:
        """The type of the device a run started now trains on: the one chosen, or what "auto" finds here."""
        chosen = self.device.currentText()
        return self.auto_device if chosen == "auto" else chosen

    def set_auto_device(self, device_type: str) -> None:
        """What "auto" means on this machine (the window asks torch off the GUI thread at start)."""
        self.auto_device = device_type
        if self.device.currentText() == "auto":
            self._device_changed()

    def _device_changed(self) -> None:
        """A family that trains differently on a GPU (ELMo's batch) shows the values the run will use."""
        kind = self.kind.currentText()
        self.settings.apply_device(self._preset(kind), self.device_type())
        self._title(kind)

    def _title(self, kind: str) -> None:
        """The settings' heading, saying which values are the GPU's own where the device makes a difference."""
        from engine import api

        device = self.device_type()
        own = [name.replace("_", " ") for name in api.device_settings(kind, device)]
        self.settings_title.setText(f"{kind} settings (hover a name for what it does)" +
                                    (f"; on {device}: {' and '.join(own)} chosen for GPUs:" if own else ":"))

    @staticmethod
    def _presets(kind: str) -> list[str]:
        from engine import api

        return api.model_presets(kind)

    def _preset(self, kind: str) -> str | None:
        """The chosen size preset, for a family that has presets."""
        return self.preset.currentText() if self.preset.currentText() in self._presets(kind) else None

    def _settings_changed(self) -> None:
        idle = self.job is None or not self.job.running
        self.start.setEnabled(idle and not self.settings.problems)
        self.start.setToolTip("fix the settings marked in red first" if self.settings.problems else "")

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "A text file (documents separated by blank lines) or JSONL")
        if path:
            self.corpus.setCurrentText(path)

    def start_run(self) -> None:
        from engine import api

        if self.job is not None and self.job.running:
            return
        kind = self.kind.currentText()
        if self.settings.problems:
            self.status.setText("the settings need fixing first: " + "; ".join(self.settings.problems))
            return
        try:
            cfg = api.model_config(kind, self._preset(kind),
                                   **self.settings.values())
        except ValueError as e:
            self.status.setText(explain(e))
            return
        earlier = str(getattr(cfg, "init_from", "") or "").strip()  # a run going on from another: named after it
        base = f"{Path(earlier).name}-on-" if earlier else f"{kind}-"
        base += time.strftime("%Y%m%d-%H%M%S")
        self.run_name, n = base, 1
        while (api.runs_folder() / self.run_name).exists() or self.runs.findItems(self.run_name, Qt.MatchFlag.MatchExactly):
            n += 1
            self.run_name = f"{base}-{n}"  # never two runs in one folder
        self.run_dir = str(api.runs_folder() / self.run_name)
        corpus = self.corpus.currentText().strip() or "default"
        args = [kind, "--out", self.run_dir, "--corpus", corpus, "--log-every", "10", *api.cli_settings(kind, cfg)]
        if self.device.currentText() != "auto":
            args += ["--device", self.device.currentText()]
        if self.steps.value():
            args += ["--max-steps", str(self.steps.value())]
        # (word2vec's kernel is compiled by the app's warm-up at start: engine.api.warm_up_in_background)
        doing = "reading the corpus, building the vocabulary"
        self._launch(args, f"starting {kind} on {corpus}… ({doing})", doing)

    def stop_run(self) -> None:
        if self.job is not None:
            self.job.cancel()

    def resume_run(self) -> None:
        if self.run_dir and not (self.job is not None and self.job.running):
            self._launch(["--resume", self.run_dir, "--log-every", "10"], f"resuming {self.run_name}…", "resuming")

    def _launch(self, args: list[str], message: str, doing: str) -> None:
        self.monitor.add_run(self.run_name)
        self.monitor.starting(self.run_name, doing)
        retire(self.job)
        self.job = ProcessTrainJob(args, self)
        self.job.run_event.connect(self._on_event)
        self.job.finished.connect(self._on_finished)
        self.job.failed.connect(self._on_failed)
        self.start.setEnabled(False)
        self.stop.setEnabled(True)
        self.resume.setEnabled(False)
        self.open_run.setEnabled(False)
        self.progress.setValue(0)
        self.status.setText(message)
        self.notes.setVisible(False)

    def _on_event(self, ev: Any, name: str | None = None) -> None:
        from engine import api

        name = name or self.run_name
        self.monitor.show_event(name, ev)
        if isinstance(ev, api.RunStarted):
            self.status.setText(f"training {ev.kind} on {ev.device} → {ev.run_dir}")
            notes = ev.info.get("notes", [])  # what the run says of itself (where it goes on from, a teacher saved again)
            self.notes.setText("\n".join(f"Note: {note}" for note in notes))
            self.notes.setVisible(bool(notes))
        elif isinstance(ev, api.StepMetrics):
            self.progress.setValue(int(ev.progress * 1000))
            self.status.setText(f"step {ev.step}  loss {ev.loss:.3f}  {ev.throughput:,.0f} {ev.unit}/s  "
                                f"ETA {_fmt_eta(ev.eta_s)}")
        elif isinstance(ev, api.RunFinished):
            metrics = api.metrics_text(ev.metrics)
            self.status.setText(finished_text(ev, metrics))

    def _on_finished(self, status: str) -> None:
        self.monitor.idle()
        saved = bool(self.run_dir) and (Path(self.run_dir) / "config.json").is_file()  # stopped before a save: none
        self.start.setEnabled(not self.settings.problems)
        if status in ("completed", "stopped") and saved:
            self.session.add_run(self.run_dir)  # the library lists it: one double-click explores it
        self.stop.setEnabled(False)
        self.resume.setEnabled(status in ("stopped", "killed") and saved)
        self.open_run.setEnabled(status in ("completed", "stopped") and saved)
        if status == "completed":
            self.progress.setValue(1000)

    def _on_failed(self, message: str) -> None:
        self.monitor.idle()
        self.start.setEnabled(not self.settings.problems)
        self.stop.setEnabled(False)
        self.status.setText(f"the run could not start or failed: {message}")

    def _choose_curves(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "A run folder (its metrics.jsonl is re-plotted)")
        if path:
            self.show_run_curves(path)

    def show_run_curves(self, run_dir: str) -> None:
        """Re-plot a run from its metrics.jsonl (finished runs keep every logged step and evaluation), read in a
        worker; a run still training (one started with ``word2bert-train … &``, say) is followed: its curves grow."""
        run_dir = str(run_dir)
        if self.job is not None and self.job.running and Path(run_dir).resolve() == Path(self.run_dir).resolve():
            self.status.setText(f"{self.run_name} is training here: its curves are drawn as it goes")
            return
        self.shown_runs.show(run_dir)

    def shutdown(self) -> None:
        """The app closes (or stops every job): no run is followed any more."""
        self.shown_runs.forget()
