"""Training and fine-tuning runs in their own process, as the Train and Fine-tune panels start them: the CLI with
``--json-events``, its events read line by line on the GUI thread, Stop as Ctrl-C (the run saves first)."""

from __future__ import annotations

import os
import signal

from PySide6.QtCore import QObject, Signal

from explorer.window_work import window_working


class ProcessTrainJob(QObject):
    """A training or fine-tuning run in its own process (the CLI with ``--json-events``): the window never
    stalls, Stop sends Ctrl-C (the run saves a resumable checkpoint), a second Stop kills it and
    frees its memory. Each JSON line on stdout arrives as a ``run_event``."""

    run_event = Signal(object)  # one TrainEvent (not "event": that would hide QObject.event, Qt's event handler)
    finished = Signal(str)  # the RunFinished status ("completed", "stopped", "diverged", "failed", "killed")
    failed = Signal(str)

    def __init__(self, args: list[str], parent: QObject | None = None, command: str = "train") -> None:
        from PySide6.QtCore import QProcess, QProcessEnvironment

        from engine.api import background_launch
        from explorer.worker_threads import MARK, training_environment

        super().__init__(parent)
        self.running = True
        self.status = ""
        self._stderr = ""
        self._buffer = b""
        self._stopping = False
        self._ready = False  # the process has said it catches Ctrl-C (its first line)
        self._stop_when_ready = False
        self.process = QProcess(self)
        if MARK in os.environ:  # the window's own thread settings are not the training's
            environment = QProcessEnvironment()
            for name, value in training_environment(dict(os.environ)).items():
                environment.insert(name, value)
            self.process.setProcessEnvironment(environment)
        self.process.readyReadStandardOutput.connect(self._read_stdout)
        self.process.readyReadStandardError.connect(self._read_stderr)
        self.process.finished.connect(self._exited)
        self.process.errorOccurred.connect(self._error)
        # at a lower priority: on a laptop's few cores the window must still get the CPU when it needs it; the
        # panel shows it started with the workers waiting (explorer.window_work)
        window_working()
        self.process.start(*background_launch(command, [*args, "--json-events"]))

    def wait(self, msecs: int) -> bool:
        """Wait for the process to end (closing the app: a stopped run is saving its checkpoint)."""
        return not self.running or self.process.waitForFinished(msecs)

    def cancel(self) -> None:
        pid = self.process.processId()
        if not self.running or not pid:
            return
        if self._stopping:
            self.process.kill()  # the second Stop: no more waiting
        elif not self._ready:  # still starting: a Ctrl-C now could be lost; it goes when the process is ready
            self._stopping = self._stop_when_ready = True
        else:
            self._stopping = True
            os.kill(pid, signal.SIGINT)

    def _read_stdout(self) -> None:
        from engine.api import RunFinished, event_from_json

        self._buffer += self.process.readAllStandardOutput().data()
        if self._buffer and not self._ready:
            self._ready = True  # its first line ("ready") comes once Ctrl-C is caught
            if self._stop_when_ready and self.process.processId():
                os.kill(self.process.processId(), signal.SIGINT)
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            if line.strip():
                try:
                    ev = event_from_json(line.decode("utf-8"))
                except (ValueError, KeyError, TypeError):
                    continue
                if isinstance(ev, RunFinished):
                    self.status = ev.status
                self.run_event.emit(ev)

    def _read_stderr(self) -> None:
        self._stderr = (self._stderr + bytes(self.process.readAllStandardError().data()).decode("utf-8", "replace"))[-4000:]

    def _exited(self, code: int, _status: object) -> None:
        self._read_stdout()
        self.running = False
        if self.status:
            self.finished.emit(self.status)
        elif self._stopping:
            self.finished.emit("killed")
        else:
            lines = [ln for ln in self._stderr.replace("\r", "\n").splitlines() if ln.strip()]
            last = lines[-1].removeprefix("word2bert-train: ").removeprefix("word2bert-finetune: ") if lines else ""
            self.failed.emit(last or f"the run exited with code {code}")

    def _error(self, error: object) -> None:
        if self.process.state() == self.process.ProcessState.NotRunning and self.running and not self._stopping:
            self.running = False
            self.failed.emit(f"could not start the training process ({error})")


def retire(job: ProcessTrainJob | None) -> None:
    """Let a training job the panel is done with go: a job is the panel's child, with its ``QProcess``, so each
    run started kept one for the life of the window (+204 of each in a 12-minute chaos bench). Deleted now when
    its process has ended, else as soon as it ends (a stopped run may still be saving)."""
    if job is None:
        return
    if job.running:
        job.finished.connect(job.deleteLater)
        job.failed.connect(job.deleteLater)
    else:
        job.deleteLater()
