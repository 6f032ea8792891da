"""The fine-tune panel: pick a pre-trained model, a task and a strategy, press Start and watch the loss,
the validation metric and the learning rate grow live; runs queue and overlay; "Ablation" runs full,
frozen and from-scratch on the same split; probe sentences show predictions changing during training;
a finished run shows its confusion matrix (or per-tag F1) and answers typed sentences."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from explorer.panels.curves import CurvesPanel
from explorer.panels.shown_runs import ShownRuns
from explorer.session import Session
from explorer.tasks import TaskRunner, query_pool
from explorer.training_process import ProcessTrainJob, retire
from explorer.widgets.finetune_form import FinetuneForm
from explorer.widgets.finetune_results import AblationTable, EvaluationView, ProbeTable, TryIt
from explorer.widgets.progress_bar import ProgressBar
from explorer.widgets.run_monitor import LEARNING_RATE, RunMonitor, finished_text
from explorer.widgets.tabs import PageSizedTabs

ABLATION = ("full", "frozen", "scratch")


@dataclass
class Run:
    """One fine-tuning run started from this panel: what started it, what it said, where it stands."""

    name: str
    args: list[str]  # word2bert-finetune's arguments
    out: str  # its run folder
    strategy: str
    ablation: bool = False  # one of an ablation's runs
    state: str = "queued"  # queued, running, pausing, paused, stopping, completed, stopped, failed, killed
    best: float | None = None  # its best validation metric
    finished: bool = False  # it has a best checkpoint to try
    report: Any = None  # its evaluation, once loaded
    handle: Any = None  # its best checkpoint, loaded while "Try it" answers with it


class FinetunePanel(QWidget):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:

        super().__init__(parent)
        self.session = session
        self.job: ProcessTrainJob | None = None
        self.current: Run | None = None  # the run the job is running (or the paused one)
        self.queue: list[Run] = []
        self.records: dict[str, Run] = {}  # every run started here, by name
        self.finished_model: Any = None
        # ---- the form (model, task, strategy, settings, probes, the task's preview)
        self.form = FinetuneForm()
        self.model = self.form.model
        self.start = QPushButton("Start")
        self.pause = QPushButton("Pause")
        self.pause.setEnabled(False)
        self.stop = QPushButton("Stop")
        self.stop.setEnabled(False)
        self.ablation = QPushButton("Ablation")
        self.ablation.setToolTip("pretrained-full, pretrained-frozen and from-scratch on the same split, overlaid")
        self.load_curves = QPushButton("Show a run's curves…")
        self.load_curves.setToolTip("a fine-tuning run folder (word2bert-finetune's, or one of this tab's): its "
                                    "loss, validation and learning rate re-plotted; one still training is followed")
        buttons = QHBoxLayout()
        for b in (self.start, self.pause, self.stop, self.ablation):
            buttons.addWidget(b)
        self.progress = ProgressBar(maximum=1000)
        self.status = QLabel("Choose a model and a task, then Start.")
        self.status.setWordWrap(True)
        self.queued = QListWidget()
        self.queued.setMaximumHeight(60)
        self.queued_label = QLabel("Queued:")
        for empty in (self.queued_label, self.queued):  # shown while runs wait their turn: an empty list's room
            empty.setVisible(False)  # went from the form in the default window
        self.monitor = RunMonitor("validation", LEARNING_RATE, examples_axis=True, default_metric_skips_loss=True)
        self.runs, self.metric_choice, self.x_axis = self.monitor.runs, self.monitor.metric_choice, self.monitor.x_axis
        self.loss_plot, self.eval_plot, self.lr_plot = (self.monitor.loss_plot, self.monitor.eval_plot,
                                                        self.monitor.extra_plot)
        left = QVBoxLayout()
        left.addWidget(self.form)
        left.addLayout(buttons)
        left.addWidget(self.load_curves)
        left.addWidget(self.progress)
        left.addWidget(self.status)
        left.addWidget(self.queued_label)
        left.addWidget(self.queued)
        left.addWidget(QLabel("Runs (untick to hide):"))
        left.addWidget(self.runs, 1)
        # two runs' room at the least (a scroll area's own 70 pixels put the form's last line below the default
        # window); it grows with the room the column has
        self.runs.setMinimumHeight(2 * self.runs.fontMetrics().lineSpacing() + 2 * self.runs.frameWidth() + 8)
        left_widget = QWidget()
        left_widget.setLayout(left)
        # ---- curves and results
        self.probe_table = ProbeTable()
        self.evaluation = EvaluationView()
        self.ablation_table = AblationTable()
        self.try_it = TryIt()
        self.results = PageSizedTabs()  # (its smallest size the page on show's: the recorded curves, the tallest, had made
        # the whole panel scroll in the default window whichever page was open)
        self.results.addTab(self.probe_table, "Probes")
        self.results.addTab(self.evaluation, "Evaluation")
        self.results.addTab(self.ablation_table, "Ablation")
        self.results.addTab(self.try_it, "Try it")
        self.curves = CurvesPanel(session)
        self.results.addTab(self.curves, "Recorded curves")
        plots = self.monitor
        plots.addWidget(self.results)
        plots.setSizes([260, 220, 110, 280])
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left_widget)
        split.addWidget(plots)
        split.setSizes([330, 700])
        QVBoxLayout(self).addWidget(split)
        # ---- workers and wiring
        self.try_runner = TaskRunner(self, query_pool())
        self.try_runner.finished.connect(self._tried)
        self.try_runner.failed.connect(self.try_it.show_error)
        self.start.clicked.connect(lambda: self.enqueue([self.form.strategy_name()]))
        self.ablation.clicked.connect(lambda: self.enqueue(list(ABLATION), ablation=True))
        self.pause.clicked.connect(self.pause_or_resume)
        self.stop.clicked.connect(self.stop_all)
        self.try_it.asked.connect(self._try)
        self.try_it.run_chosen.connect(self._show_finished)
        self.load_runner = TaskRunner(self)
        self.load_runner.finished.connect(self._loaded)
        self.load_runner.failed.connect(self.try_it.show_error)
        # the evaluation of a fine-tuned run opened from the library (none for a Hugging Face classifier: nothing said)
        self.report_runner = TaskRunner(self)
        self.report_runner.finished.connect(self._report_read)
        # runs shown from their folders (a finished run re-plotted, one fine-tuning elsewhere followed)
        self.shown_runs = ShownRuns(
            self.monitor, self, lambda: set(self.records),
            lambda name, kind: f"{name} is a pretraining run ({kind}): the Pretrain tab's “Show a run's curves…” "
            "draws it" if kind != "finetune" else None)
        self.shown_runs.message.connect(self.status.setText)
        self.shown_runs.ended.connect(self.session.add_run)
        self.shown_runs.drawn.connect(self._read_report)  # and its evaluation, where it has one
        self.load_curves.clicked.connect(self._choose_curves)
        session.modelsChanged.connect(self._models_changed)
        self._models_changed()

    # ------------------------------------------------------------ form

    def _models_changed(self) -> None:
        from engine.api import Capability

        fine_tuned = Capability.CLASSIFY | Capability.TAG | Capability.ANSWER  # fine-tune the base model, not these
        models = {n: h for n, h in self.session.models.items() if not h.capabilities & fine_tuned}
        # a fine-tuned model opened from the library (a run, or a Hugging Face classifier or tagger) answers in "Try
        # it" beside the runs that finished here
        loaded = [n for n, h in self.session.models.items() if h.capabilities & fine_tuned and n not in self.records]
        new = [n for n in loaded if self.try_it.run.findText(n) < 0]
        self.try_it.set_loaded(loaded)
        if new and not self.busy:  # one just opened: where it answers
            self.results.setCurrentWidget(self.try_it)
        current = self.try_it.run.currentText()
        if current in self.records:  # (the list moved to a run of this window as the loaded model it showed went)
            if self.finished_model is not self.records[current].handle:
                self.finished_model = None
                self._show_finished(current)
        else:  # the one listed first answers; one unloaded answers no more
            handle = self.session.models.get(current) if current else None
            if handle is not self.finished_model:
                self.finished_model = None
                if handle is not None:
                    self._show_finished(current)
                else:
                    self.try_it.set_idle()
        self.model.set_models(models, prefer="bert-tiny")
        reason = self.model.reason()
        if reason and loaded and len(models) == 0:
            reason = f"only fine-tuned models are loaded ({', '.join(loaded)}: they answer under Try it)"
        self.start.setEnabled(not reason and not self.busy)
        self.ablation.setEnabled(not reason and not self.busy)
        if reason:
            self.status.setText(f"Fine-tuning needs a contextual model (ELMo, GPT, BERT): {reason}")
        elif self.status.text().startswith("Fine-tuning needs"):
            self.status.setText("Choose a model and a task, then Start.")

    @property
    def busy(self) -> bool:
        return self.job is not None and self.job.running

    def _choose_curves(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "A fine-tuning run folder (its metrics.jsonl is re-plotted)")
        if path:
            self.show_run_curves(path)

    def show_run_curves(self, run_dir: str) -> None:
        """Re-plot a fine-tuning run from its metrics.jsonl beside this tab's runs, read in a worker; one still
        training (``word2bert-finetune … &``) is followed: its curves grow."""
        own = next((run for run in self.records.values() if Path(run.out).resolve() == Path(run_dir).resolve()
                    and run.name in self.monitor.events), None)
        if own is not None:  # one of this tab's runs: on the plots already (not drawn twice)
            self.monitor.tick(own.name)
            self.status.setText(f"{own.name} is one of this tab's runs: its curves are on the plots"
                                + (" and drawn as it goes" if own is self.current and self.busy else ""))
            return
        self.shown_runs.show(run_dir)

    def shutdown(self) -> None:
        """The app closes (or stops every job): no run is followed any more."""
        self.shown_runs.forget()

    # ------------------------------------------------------------ queue

    def enqueue(self, strategies: list[str], ablation: bool = False) -> None:
        from engine import api

        if not self.model.currentText() or self.model.reason():
            self.status.setText(self.model.reason() or "choose a model first")
            return
        chosen = self.session.models.get(self.model.currentText())
        if chosen is None:  # a row shown but not usable ("word2vec-sgns (cannot)"), or a model unloaded meanwhile
            self.status.setText(f"{self.model.currentText()}: choose a model that can be fine-tuned")
            return
        problem = self.form.problem()
        if problem:
            self.status.setText(problem)
            return
        stamp = time.strftime("%m%d-%H%M%S")
        task_name = Path(self.form.task_text()).stem[:24] or "task"
        items = []
        for strategy in strategies:
            name = f"{task_name}-{strategy}-{stamp}"
            n = 1
            while (api.runs_folder() / name).exists() or name in self.records or any(q.name == name for q in self.queue):
                n += 1
                name = f"{task_name}-{strategy}-{stamp}-{n}"
            out = str(api.runs_folder() / name)
            items.append(Run(name, self.form.args(chosen.path or chosen.name, strategy, out), out, strategy, ablation))
        if ablation:
            self.ablation_table.start(self.form.task_text(), [(i.name, i.strategy) for i in items])
            self.results.setCurrentWidget(self.ablation_table)
        self.queue += items
        self._refresh_queue()
        self._next()

    def _refresh_queue(self) -> None:
        self.queued.clear()
        self.queued.addItems([q.name for q in self.queue])
        self.queued_label.setVisible(bool(self.queue))
        self.queued.setVisible(bool(self.queue))

    def _next(self) -> None:
        if self.busy or not self.queue:
            return
        self.current = self.queue.pop(0)
        self._refresh_queue()
        self._launch(self.current.args, f"starting {self.current.name}… (loading the model and the data)")

    def _launch(self, args: list[str], message: str) -> None:
        assert self.current is not None
        run = self.current
        run.state = "running"
        self._add_run(run)
        probes = self.form.probe_texts()
        first_of_ablation = run.ablation and run.strategy == "full"
        if probes and "--resume" not in args and (not run.ablation or first_of_ablation):
            self.probe_table.reset(probes, "ablation (full, frozen, scratch)" if first_of_ablation else run.name)
        retire(self.job)
        self.job = ProcessTrainJob(args, self, command="finetune")
        self.job.run_event.connect(self._on_event)
        self.job.finished.connect(self._on_finished)
        self.job.failed.connect(self._on_failed)
        for b in (self.start, self.ablation):
            b.setEnabled(False)
        self.stop.setEnabled(True)
        self.pause.setEnabled(True)
        self.pause.setText("Pause")
        self.progress.setValue(0)
        self.status.setText(message)
        self.monitor.starting(run.name, "resuming" if "--resume" in args else "loading the model and the data")

    def pause_or_resume(self) -> None:
        run = self.current
        if run is None:
            return
        if run.state == "running" and self.job is not None:
            run.state = "pausing"
            self.job.cancel()  # the run saves its state and stops; Resume continues it
            self.pause.setEnabled(False)
        elif run.state == "paused":
            self._launch(["--resume", run.out], f"resuming {run.name}…")

    def stop_all(self) -> None:
        """Stop the running run (it keeps its best checkpoint) and drop the queue; a second Stop kills it."""
        self.queue.clear()
        self._refresh_queue()
        if self.job is not None and self.job.running:
            if self.current is not None:
                self.current.state = "stopping"
            self.job.cancel()

    # ------------------------------------------------------------ events

    def _add_run(self, run: Run) -> None:
        self.records.setdefault(run.name, run)
        self.monitor.add_run(run.name)

    def _on_event(self, ev: Any) -> None:
        from engine import api

        if self.current is None:
            return
        run = self.current
        name = run.name
        self.monitor.show_event(name, ev)  # it keeps the run's events
        if isinstance(ev, api.RunStarted):
            notes = " ".join(ev.info.get("notes", []))
            self.status.setText(f"{name}: {ev.info.get('strategy')} on {ev.info.get('task')}, "
                                f"{ev.info.get('trainable_parameters', 0):,} weights learn, "
                                f"{ev.info.get('frozen_parameters', 0):,} frozen; {ev.device}. {notes}")
        elif isinstance(ev, api.StepMetrics):
            self.progress.setValue(int(ev.progress * 1000))
            self.status.setText(f"{name}: step {ev.step}, loss {ev.loss:.3f}, {ev.throughput:,.0f} examples/s")
        elif isinstance(ev, api.ProbePredictions):
            self.probe_table.add(ev.step, ev.texts, ev.labels, ev.probabilities, run.strategy if run.ablation else "")
        elif isinstance(ev, api.RunFinished):
            self.status.setText(f"{name}: {finished_text(ev)}")
            metric = next((e.info.get("metric") for e in self.monitor.events[name] if isinstance(e, api.RunStarted)), "")
            best = ev.metrics.get(f"best_{metric}")
            if best is not None:
                run.best = best
            best_step = next((e.step for e in self.monitor.events[name] if isinstance(e, api.EvalMetrics)
                              and best is not None and best in e.metrics.values()), None)
            self.ablation_table.update_run(name, best, best_step, ev.status)

    def _on_finished(self, status: str) -> None:
        self.monitor.idle()
        run = self.current
        if run is None:
            return
        paused = run.state == "pausing" and status in ("stopped", "killed")
        run.state = "paused" if paused else status
        saved = (Path(run.out) / "config.json").is_file()  # stopped before its first step: nothing to try
        if status in ("completed", "stopped") and saved:
            self.session.add_run(run.out)
            self._finished_run(run)
        name = run.name
        self.pause.setText("Resume")
        self.pause.setEnabled(bool(paused))
        if status == "completed":
            self.progress.setValue(1000)
        if not paused:
            self.stop.setEnabled(False)
            for b in (self.start, self.ablation):
                b.setEnabled(not self.model.reason())
            if status != "stopped" or self.queue:
                self._next()
        else:
            self.status.setText(f"{name} paused at its last step; Resume continues it")
            self.stop.setEnabled(False)
            for b in (self.start, self.ablation):
                b.setEnabled(not self.model.reason())

    def _on_failed(self, message: str) -> None:
        self.monitor.idle()
        name = self.current.name if self.current is not None else "the run"
        if self.current is not None:
            self.current.state = "failed"
        self.status.setText(f"{name} could not start or failed: {message}")
        self.ablation_table.update_run(name, None, None, "failed")
        self.stop.setEnabled(bool(self.queue))
        self.pause.setEnabled(False)
        for b in (self.start, self.ablation):
            b.setEnabled(not self.model.reason())
        self._next()

    def _finished_run(self, run: Run) -> None:
        """List the run under "Try it" and show it: the best run of an ablation once all of its runs ended."""
        run.finished = True
        choice = run.name
        if run.ablation and not any(q.ablation for q in self.queue):
            group = [n for n in self.ablation_table.rows if n in self.records and self.records[n].best is not None]
            if group:
                choice = max(group, key=lambda n: self.records[n].best or 0.0)
        self.try_it.add_run(run.name, choice)

    def _show_finished(self, name: str) -> None:
        """Load a finished run (once) in a worker: its evaluation, and its best checkpoint for "Try it"."""
        run = self.records.get(name)
        if run is None:
            handle = self.session.models.get(name)  # a fine-tuned model the library loaded
            if handle is not None:
                self.finished_model = handle
                self.try_it.set_ready(name)
                if self.try_it.input.text().strip():
                    self._try(self.try_it.input.text())
                if handle.path:  # a run fine-tuned by word2bert (the CLI's, an earlier window's): its evaluation too
                    self._read_report(handle.path, name, chosen=True)
            return
        if not run.finished:
            return
        if run.handle is not None:
            self._loaded((name, run.report, run.handle))
            return
        run_dir = run.out

        def work() -> Any:
            from engine import api

            return name, api.finetune_report(run_dir), api.load(run_dir)

        self.load_runner.submit(work)

    def _read_report(self, run_dir: str, name: str, chosen: bool = False) -> None:
        """Show a fine-tuned run's evaluation (read in a worker; none said for a folder without one). ``chosen``:
        it answers under "Try it", and is shown only if it still does when read."""

        def report() -> Any:
            from engine import api

            return name, api.finetune_report(run_dir), chosen

        self.report_runner.submit(report)

    def _report_read(self, result: tuple[str, Any, bool]) -> None:
        name, report, chosen = result
        if not chosen or name == self.try_it.run.currentText():  # (not another chosen since)
            self.evaluation.show_report(name, report)

    def _loaded(self, result: tuple[str, Any, Any]) -> None:
        name, report, handle = result
        self.records[name].report = report
        if name != self.try_it.run.currentText():
            return  # another run was chosen meanwhile: this one's model is loaded again if it is chosen
        # one fine-tuned model at a time, the one "Try it" answers with: every finished run kept its model for the
        # life of the window (bench/robustness/chaos.py --holders found them after their runs were long gone)
        for record in self.records.values():
            record.handle = None
        self.records[name].handle = handle
        self.finished_model = handle
        self.evaluation.show_report(name, report)
        self.try_it.set_ready(name)
        if self.try_it.input.text().strip():
            self._try(self.try_it.input.text())

    def _tried(self, result: Any) -> None:
        self.try_it.show_result(result)

    def _try(self, text: str) -> None:
        handle = self.finished_model
        if handle is None or not text.strip():
            return
        a, _, b = text.partition("|||")

        from engine.api import Capability

        def work() -> Any:
            if Capability.TAG in handle.capabilities:
                return handle.tag(text)
            if Capability.ANSWER in handle.capabilities:
                return handle.answer(a.strip(), b.strip() or a.strip())
            return handle.classify(a.strip(), b.strip() or None)

        self.try_runner.submit(work)
