"""The fine-tune panel's form: the pre-trained model, the task (with a preview of its data, read in a
worker), the strategy and the settings, and the probe sentences; it turns them into the arguments of
``word2bert-finetune``."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from explorer.tasks import TaskRunner
from explorer.widgets.model_picker import ModelPicker


class FinetuneForm(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        from engine import api

        super().__init__(parent)
        self.model = ModelPicker(api.Capability.CONTEXTUAL)
        self.task = QComboBox(editable=True)
        self.task.addItems(list(api.finetune_tasks()))
        self.task.setToolTip("\n".join(f"{k}: {v}" for k, v in api.finetune_tasks().items()))
        browse = QPushButton("File…")
        browse.clicked.connect(self._browse)
        self.validation = QLineEdit(placeholderText="(a fixed split of the task)")
        self.strategy = QComboBox()
        self.strategy.addItems(list(api.STRATEGIES))
        self.top = QSpinBox()
        self.top.setMinimum(0)
        self.top.setMaximum(48)
        self.top.setPrefix("N = ")
        self.top.setValue(1)
        self.top.setEnabled(False)
        self.epochs = QSpinBox(minimum=1, maximum=100, value=3)
        self.lr = QLineEdit(placeholderText="auto (1e-3 frozen, 2e-4 otherwise)")
        self.batch_size = QSpinBox(minimum=1, maximum=4096, value=32)
        self.max_len = QSpinBox(minimum=8, maximum=4096, value=128)
        self.lm_weight = QDoubleSpinBox(minimum=0, maximum=10, singleStep=0.1, value=0.0)
        self.lm_weight.setToolTip("GPT's auxiliary language-model loss weight λ (GPT used 0.5); other models ignore it")
        self.device = QComboBox()
        self.device.addItems(["auto", "cpu", "cuda", "mps"])
        self.probes = QPlainTextEdit(placeholderText="Probe sentences, one per line, e.g.\nThe bank raised interest "
                                     "rates again.\nThe striker scored twice in the final.")
        self.probes.setMaximumHeight(80)
        self.probe_every = QSpinBox(minimum=0, maximum=1_000_000, value=0, suffix=" steps")
        self.probe_every.setSpecialValueText("at each validation")
        self.preview = QPlainTextEdit(readOnly=True)
        self.preview.setMaximumHeight(110)
        # the boxes as short as their lines (the placeholder's three, the preview's two: it scrolls), not a scroll
        # area's 70 pixels: with them the form's last lines and the status under it fell below the default window
        for box, lines in ((self.probes, 3), (self.preview, 2)):
            box.setMinimumHeight(lines * box.fontMetrics().lineSpacing() + 2 * box.frameWidth()
                                 + 2 * round(box.document().documentMargin()))
        task_row = QHBoxLayout()
        task_row.addWidget(self.task, 1)
        task_row.addWidget(browse)
        strategy_row = QHBoxLayout()
        strategy_row.addWidget(self.strategy, 1)
        strategy_row.addWidget(self.top)
        form = QFormLayout()
        form.addRow("Model", self.model)
        form.addRow("Task", task_row)
        form.addRow("Validation file", self.validation)
        form.addRow("Strategy", strategy_row)
        form.addRow("Epochs", self.epochs)
        form.addRow("Learning rate", self.lr)
        form.addRow("Batch size", self.batch_size)
        form.addRow("Max length", self.max_len)
        form.addRow("GPT LM weight", self.lm_weight)
        form.addRow("Device", self.device)
        form.addRow("Probe every", self.probe_every)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(form)
        layout.addWidget(QLabel("Probe sentences:"))
        layout.addWidget(self.probes)
        layout.addWidget(QLabel("The task's data:"))
        layout.addWidget(self.preview)
        self.preview_runner = TaskRunner(self)
        self.preview_runner.finished.connect(self._show_preview)
        self.preview_runner.failed.connect(lambda m: self.preview.setPlainText(f"cannot use this data: {m}"))
        self.task.currentTextChanged.connect(lambda _: self._load_preview())
        self.validation.editingFinished.connect(self._load_preview)
        self.strategy.currentTextChanged.connect(lambda s: self.top.setEnabled(s == "top-N"))
        self._previewed = False  # the first preview waits until the form is shown (not at app start)

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if not self._previewed:
            self._load_preview()

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Task data: CSV/TSV (text[,text_b],label), CoNLL, SQuAD JSON")
        if path:
            self.task.setCurrentText(path)

    def _load_preview(self) -> None:
        task, validation = self.task.currentText().strip(), self.validation.text().strip() or None
        if not task or not self.isVisible():
            return  # read when the form is shown
        self._previewed = True
        self.preview.setPlainText(f"reading {task}…")

        def work() -> Any:
            from engine import api

            return api.task_preview(task, validation)

        self.preview_runner.submit(work)

    def _show_preview(self, data: Any) -> None:
        counts = data.label_counts("train")
        shown = ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])[:12])
        lines = [f"{data.family}: {len(data.train)} train / {len(data.validation)} validation; labels: {shown}",
                 *data.notes, *data.preview(4)]
        self.preview.setPlainText("\n".join(lines))

    def strategy_name(self) -> str:
        s = self.strategy.currentText()
        return f"top-{self.top.value()}" if s == "top-N" else s

    def args(self, model: str, strategy: str, out: str) -> list[str]:
        """The word2bert-finetune arguments of these settings."""
        args = ["--model", model, "--task", self.task_text(), "--out", out,
                "--strategy", strategy, "--epochs", str(self.epochs.value()), "--batch-size",
                str(self.batch_size.value()), "--max-len", str(self.max_len.value())]
        if self.validation.text().strip():
            args += ["--validation", self.validation.text().strip()]
        if self.lr.text().strip():
            args += ["--lr", str(float(self.lr.text()))]
        if self.lm_weight.value():
            args += ["--lm-weight", str(self.lm_weight.value())]
        if self.device.currentText() != "auto":
            args += ["--device", self.device.currentText()]
        if self.probe_every.value():
            args += ["--probe-every", str(self.probe_every.value())]
        for line in self.probe_texts():
            args += ["--probe", line]
        return args

    def task_text(self) -> str:
        return self.task.currentText().strip()

    def probe_texts(self) -> list[str]:
        return [line.strip() for line in self.probes.toPlainText().splitlines() if line.strip()]

    def problem(self) -> str:
        """What stops a run from starting, in words ("" when nothing)."""
        if not self.model.currentText() or self.model.reason():
            return self.model.reason() or "choose a model first"
        if self.lr.text().strip():
            try:
                float(self.lr.text())
            except ValueError:
                return f"the learning rate {self.lr.text()!r} is not a number (e.g. 2e-4)"
        return ""

