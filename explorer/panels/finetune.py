"""The fine-tune panel: pick a pre-trained model, a task and a strategy, press Start and watch the loss,
the validation metric and the learning rate grow live; runs queue and overlay; "Ablation" runs full,
frozen and from-scratch on the same split; probe sentences show predictions changing during training;
a finished run shows its confusion matrix (or per-tag F1) and answers typed sentences."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from explorer.session import Session
from explorer.tasks import ProcessTrainJob, TaskRunner, query_pool
from explorer.widgets.finetune_form import FinetuneForm
from explorer.widgets.finetune_results import AblationTable, EvaluationView, ProbeTable, TryIt
from explorer.widgets.loss_plot import LossPlot

ABLATION = ("full", "frozen", "scratch")


class FinetunePanel(QWidget):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:

        super().__init__(parent)
        self.session = session
        self.job: ProcessTrainJob | None = None
        self.current: dict[str, Any] | None = None  # the run the job is running
        self.queue: list[dict[str, Any]] = []
        self.events: dict[str, list[Any]] = {}  # run -> its events (re-plotted when the x-axis changes)
        self.batch: dict[str, int] = {}
        self.run_dirs: dict[str, str] = {}
        self.finished_model: Any = None
        self.finished_dirs: dict[str, str] = {}  # finished run -> its folder
        self.loaded: dict[str, tuple[Any, Any]] = {}  # finished run -> (report, handle)
        self.best_of: dict[str, float] = {}  # run -> its best validation metric
        # ---- the form (model, task, strategy, settings, probes, the task's preview)
        self.form = FinetuneForm()
        self.model = self.form.model
        self.start = QPushButton("Start")
        self.pause = QPushButton("Pause", enabled=False)
        self.stop = QPushButton("Stop", enabled=False)
        self.ablation = QPushButton("Ablation")
        self.ablation.setToolTip("pretrained-full, pretrained-frozen and from-scratch on the same split, overlaid")
        buttons = QHBoxLayout()
        for b in (self.start, self.pause, self.stop, self.ablation):
            buttons.addWidget(b)
        self.progress = QProgressBar(maximum=1000)
        self.status = QLabel("Choose a model and a task, then Start.")
        self.status.setWordWrap(True)
        self.queued = QListWidget()
        self.queued.setMaximumHeight(60)
        self.runs = QListWidget()
        self.runs.itemChanged.connect(lambda _: self._apply_visibility())
        left = QVBoxLayout()
        left.addWidget(self.form)
        left.addLayout(buttons)
        left.addWidget(self.progress)
        left.addWidget(self.status)
        left.addWidget(QLabel("Queued:"))
        left.addWidget(self.queued)
        left.addWidget(QLabel("Runs (untick to hide):"))
        left.addWidget(self.runs, 1)
        left_widget = QWidget()
        left_widget.setLayout(left)
        # ---- curves and results
        self.loss_plot = LossPlot(y_label="training loss")
        self.eval_plot = LossPlot(y_label="validation")
        self.lr_plot = LossPlot(y_label="learning rate")
        self.metric_choice = QComboBox()
        self.metric_choice.currentTextChanged.connect(lambda _: self._apply_visibility())
        self.x_axis = QComboBox()
        self.x_axis.addItems(["steps", "examples seen"])
        self.x_axis.currentTextChanged.connect(lambda _: self._replot())
        top_row = QHBoxLayout()
        top_row.addWidget(QLabel("Validation metric:"))
        top_row.addWidget(self.metric_choice)
        top_row.addWidget(QLabel("x-axis:"))
        top_row.addWidget(self.x_axis)
        top_row.addStretch(1)
        eval_box = QWidget()
        eval_layout = QVBoxLayout(eval_box)
        eval_layout.setContentsMargins(0, 0, 0, 0)
        eval_layout.addLayout(top_row)
        eval_layout.addWidget(self.eval_plot, 1)
        self.probe_table = ProbeTable()
        self.evaluation = EvaluationView()
        self.ablation_table = AblationTable()
        self.try_it = TryIt()
        self.results = QTabWidget()
        self.results.addTab(self.probe_table, "Probes")
        self.results.addTab(self.evaluation, "Evaluation")
        self.results.addTab(self.ablation_table, "Ablation")
        self.results.addTab(self.try_it, "Try it")
        plots = QSplitter(Qt.Orientation.Vertical)
        plots.addWidget(self.loss_plot)
        plots.addWidget(eval_box)
        plots.addWidget(self.lr_plot)
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
        session.modelsChanged.connect(self._models_changed)
        self._models_changed()

    # ------------------------------------------------------------ form

    def _models_changed(self) -> None:
        models = {n: h for n, h in self.session.models.items() if h.kind != "finetune"}
        self.model.set_models(models, prefer="bert-tiny")
        reason = self.model.reason()
        self.start.setEnabled(not reason and not self.busy)
        self.ablation.setEnabled(not reason and not self.busy)
        if reason:
            self.status.setText(f"Fine-tuning needs a contextual model (ELMo, GPT, BERT): {reason}")
        elif self.status.text().startswith("Fine-tuning needs"):
            self.status.setText("Choose a model and a task, then Start.")

    @property
    def busy(self) -> bool:
        return self.job is not None and self.job.running

    # ------------------------------------------------------------ queue

    def enqueue(self, strategies: list[str], ablation: bool = False) -> None:
        from engine import api

        if not self.model.currentText() or self.model.reason():
            self.status.setText(self.model.reason() or "choose a model first")
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
            while (api.runs_folder() / name).exists() or name in self.events or any(q["name"] == name for q in self.queue):
                n += 1
                name = f"{task_name}-{strategy}-{stamp}-{n}"
            out = str(api.runs_folder() / name)
            handle = self.session.models[self.model.currentText()]
            items.append({"name": name, "args": self.form.args(handle.path or handle.name, strategy, out), "out": out,
                          "strategy": strategy,
                          "ablation": ablation})
        if ablation:
            self.ablation_table.start(self.form.task_text(), [(i["name"], i["strategy"]) for i in items])
            self.results.setCurrentWidget(self.ablation_table)
        self.queue += items
        self._refresh_queue()
        self._next()

    def _refresh_queue(self) -> None:
        self.queued.clear()
        self.queued.addItems([q["name"] for q in self.queue])

    def _next(self) -> None:
        if self.busy or not self.queue:
            return
        self.current = self.queue.pop(0)
        self._refresh_queue()
        self._launch(self.current["args"], f"starting {self.current['name']}… (loading the model and the data)")

    def _launch(self, args: list[str], message: str) -> None:
        assert self.current is not None
        name = self.current["name"]
        self.run_dirs[name] = self.current["out"]
        self._add_run(name)
        probes = self.form.probe_texts()
        first_of_ablation = self.current.get("ablation") and self.current["strategy"] == "full"
        if probes and "--resume" not in args and (not self.current.get("ablation") or first_of_ablation):
            self.probe_table.reset(probes, "ablation (full, frozen, scratch)" if first_of_ablation else name)
        self.job = ProcessTrainJob(args, self, command="finetune")
        self.job.event.connect(self._on_event)
        self.job.finished.connect(self._on_finished)
        self.job.failed.connect(self._on_failed)
        for b in (self.start, self.ablation):
            b.setEnabled(False)
        self.stop.setEnabled(True)
        self.pause.setEnabled(True)
        self.pause.setText("Pause")
        self.progress.setValue(0)
        self.status.setText(message)

    def pause_or_resume(self) -> None:
        if self.pause.text() == "Pause" and self.job is not None:
            self.current = {**(self.current or {}), "paused": True}
            self.job.cancel()  # the run saves its state and stops; Resume continues it
            self.pause.setEnabled(False)
        elif self.current is not None:
            self._launch(["--resume", self.current["out"]], f"resuming {self.current['name']}…")

    def stop_all(self) -> None:
        """Stop the running run (it keeps its best checkpoint) and drop the queue; a second Stop kills it."""
        self.queue.clear()
        self._refresh_queue()
        if self.job is not None and self.job.running:
            if self.current is not None:
                self.current["paused"] = False
            self.job.cancel()

    # ------------------------------------------------------------ events

    def _add_run(self, name: str) -> None:
        if name not in self.events:
            self.events[name] = []
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.runs.addItem(item)
        self.loss_plot.run_curves(name)

    def _x(self, name: str, step: int) -> float:
        return step * self.batch.get(name, 1) if self.x_axis.currentText() == "examples seen" else step

    def _on_event(self, ev: Any, name: str | None = None, replay: bool = False) -> None:
        from engine import api

        name = name or (self.current or {}).get("name", "")
        if not replay:
            self.events.setdefault(name, []).append(ev)
        colour = self.loss_plot.run_curves(name)
        if isinstance(ev, api.RunStarted):
            self.batch[name] = int(ev.info.get("batch_size", 1))
            if not replay:
                notes = " ".join(ev.info.get("notes", []))
                self.status.setText(f"{name}: {ev.info.get('strategy')} on {ev.info.get('task')}, "
                                    f"{ev.info.get('trainable_parameters', 0):,} weights learn, "
                                    f"{ev.info.get('frozen_parameters', 0):,} frozen; {ev.device}. {notes}")
        elif isinstance(ev, api.StepMetrics):
            x = self._x(name, ev.step)
            self.loss_plot.append_loss(name, x, ev.loss)
            self.lr_plot.curve(name, colour=colour)
            self.lr_plot.append(name, x, ev.lr)
            if not replay:
                self.progress.setValue(int(ev.progress * 1000))
                self.status.setText(f"{name}: step {ev.step}, loss {ev.loss:.3f}, {ev.throughput:,.0f} examples/s")
        elif isinstance(ev, api.EvalMetrics):
            for metric, value in ev.metrics.items():
                if self.metric_choice.findText(metric) < 0:
                    self.metric_choice.addItem(metric)
                self.eval_plot.curve(f"{name} {metric}", colour=colour, symbol="o")
                self.eval_plot.append(f"{name} {metric}", self._x(name, ev.step), value)
            if self.metric_choice.currentText() == "loss" and len(ev.metrics) > 1:
                self.metric_choice.setCurrentIndex(1)  # the task metric, not the loss, by default
            self._apply_visibility()
        elif isinstance(ev, api.ProbePredictions) and not replay:
            run = (self.current or {}).get("strategy", "") if (self.current or {}).get("ablation") else ""
            self.probe_table.add(ev.step, ev.texts, ev.labels, ev.probabilities, run)
        elif isinstance(ev, api.RunFinished) and not replay:
            self.status.setText(f"{name}: {ev.status} at step {ev.step}. {ev.message}")
            metric = next((e.info.get("metric") for e in self.events[name] if isinstance(e, api.RunStarted)), "")
            best = ev.metrics.get(f"best_{metric}")
            if best is not None:
                self.best_of[name] = best
            best_step = next((e.step for e in self.events[name] if isinstance(e, api.EvalMetrics)
                              and best is not None and best in e.metrics.values()), None)
            self.ablation_table.update_run(name, best, best_step, ev.status)

    def _on_finished(self, status: str) -> None:
        current = self.current or {}
        name = current.get("name", "")
        if status in ("completed", "stopped") and name:
            self.session.add_run(current["out"])
            self._finished_run(name, current["out"])
        paused = current.get("paused") and status in ("stopped", "killed")
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
        name = (self.current or {}).get("name", "the run")
        self.status.setText(f"{name} could not start or failed: {message}")
        self.ablation_table.update_run(name, None, None, "failed")
        self.stop.setEnabled(bool(self.queue))
        self.pause.setEnabled(False)
        for b in (self.start, self.ablation):
            b.setEnabled(not self.model.reason())
        self._next()

    def _finished_run(self, name: str, run_dir: str) -> None:
        """List the run under "Try it" and show it: the best run of an ablation once all of its runs ended."""
        self.finished_dirs[name] = run_dir
        choice = name
        if (self.current or {}).get("ablation") and not any(q.get("ablation") for q in self.queue):
            group = [n for n in self.ablation_table.rows if n in self.best_of]
            if group:
                choice = max(group, key=lambda n: self.best_of[n])
        self.try_it.add_run(name, choice)

    def _show_finished(self, name: str) -> None:
        """Load a finished run (once) in a worker: its evaluation, and its best checkpoint for "Try it"."""
        if name in self.loaded:
            self._loaded((name, *self.loaded[name]))
            return
        run_dir = self.finished_dirs.get(name)
        if not run_dir:
            return

        def work() -> Any:
            from engine import api

            return name, api.finetune_report(run_dir), api.load(run_dir)

        self.load_runner.submit(work)

    def _loaded(self, result: tuple[str, Any, Any]) -> None:
        name, report, handle = result
        self.loaded[name] = (report, handle)
        if name != self.try_it.run.currentText():
            return
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

        def work() -> Any:
            if handle.info.get("family") == "tag":
                return handle.tag(text)
            if handle.info.get("family") == "span":
                return handle.answer(a.strip(), b.strip() or a.strip())
            return handle.classify(a.strip(), b.strip() or None)

        self.try_runner.submit(work)

    # ------------------------------------------------------------ views

    def _hidden(self) -> set[str]:
        return {self.runs.item(i).text() for i in range(self.runs.count())
                if self.runs.item(i).checkState() != Qt.CheckState.Checked}

    def _apply_visibility(self) -> None:
        hidden, metric = self._hidden(), self.metric_choice.currentText()
        for name in self.events:
            self.loss_plot.set_run_visible(name, name not in hidden)
            self.lr_plot.set_visible(name, name not in hidden)
            for m in range(self.metric_choice.count()):
                self.eval_plot.set_visible(f"{name} {self.metric_choice.itemText(m)}",
                                           name not in hidden and self.metric_choice.itemText(m) == metric)
        self.eval_plot.setLabel("left", f"validation {metric}")

    def _replot(self) -> None:
        """Draw every run again with the chosen x-axis (steps or examples seen)."""
        for plot in (self.loss_plot, self.eval_plot, self.lr_plot):
            plot.clear_curves()
            plot.setLabel("bottom", self.x_axis.currentText())
        for name, events in self.events.items():
            self._add_run(name)
            for ev in events:
                self._on_event(ev, name, replay=True)
        self._apply_visibility()
        for plot in (self.loss_plot, self.eval_plot, self.lr_plot):
            plot.redraw_now()
            plot.autoRange()
