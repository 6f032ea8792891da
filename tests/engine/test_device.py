"""Threads for queries: small forward passes stay on the query thread's one core; big ones use them all."""

import threading

import torch

from engine import device


def test_a_big_forward_pass_gets_every_core_and_gives_them_back(monkeypatch):
    monkeypatch.setattr(device, "_CORES", [2])
    seen = {}

    def query_thread():
        torch.set_num_threads(1)  # as the app's query thread
        with device.threads_for(device.PARALLEL_WORK / 10):  # bert-tiny, a sentence
            seen["small"] = torch.get_num_threads()
        with device.threads_for(device.PARALLEL_WORK * 2):  # a BERT-base, a sentence
            seen["big"] = torch.get_num_threads()
        seen["after"] = torch.get_num_threads()

    t = threading.Thread(target=query_thread)
    t.start()
    t.join()
    assert seen == {"small": 1, "big": 2, "after": 1}



def test_an_accelerator_other_than_cuda_gets_the_precision_that_runs_there(monkeypatch):
    """Apple MPS (or any non-CUDA accelerator): bf16 where autocast does it, else fp16 only with a grad
    scaler, else fp32; never CUDA's answer assumed."""
    fake = torch.device("meta")  # a device type that is not CUDA; what it can do is what the probes say
    cases = [({torch.bfloat16, torch.float16}, True, torch.bfloat16), ({torch.float16}, True, torch.float16),
             ({torch.float16}, False, None), (set(), True, None)]
    for works, scaler, expected in cases:
        monkeypatch.setattr(device, "_TRIED", {})
        monkeypatch.setattr(device, "autocast_works", lambda dev, dtype, works=works: dtype in works)
        monkeypatch.setattr(device, "scaler_works", lambda kind, scaler=scaler: scaler)
        p = device.precision_for(fake)
        assert p.dtype == expected and p.device_type == "meta"
        assert p.needs_scaler == (expected == torch.float16)


def test_the_cpu_probe_of_autocast_answers_without_raising():
    assert device.autocast_works(torch.device("cpu"), torch.bfloat16) in (True, False)
    assert device.scaler_works("cpu") in (True, False)


def test_no_code_path_assumes_cuda():
    """Apple silicon by construction: no .cuda() anywhere, and torch.cuda is called only in the modules
    that decide the device and in word2vec's CUDA graph, which only a CUDA device enters (each call
    there behind a check of the device type)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    allowed = {"engine/device.py", "engine/training/distributed.py", "engine/models/word2vec/graphed.py"}
    offenders = []
    for folder in ("engine", "explorer"):
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8")
            if re.search(r"\.cuda\(\s*\)", text):
                offenders.append(f"{rel}: .cuda()")
            if rel not in allowed and re.search(r"torch\.cuda\.(?!is_available)", text):
                offenders.append(f"{rel}: torch.cuda.*")
    assert not offenders, offenders


def test_no_tensor_becomes_float64_before_it_leaves_the_device():
    """MPS has no float64: every ``.double()`` in the engine and the app is taken on the CPU (``.cpu().double()``),
    so that a query on Apple silicon does not raise where the same query on CUDA answers."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    offenders = []
    for folder in ("engine", "explorer"):
        for path in sorted((root / folder).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if re.search(r"(?<!\.cpu\(\))\.double\(\)", line) or re.search(r"\.to\(torch\.float64", line):
                    offenders.append(f"{path.relative_to(root).as_posix()}:{number}: {line.strip()}")
    assert not offenders, offenders


def test_a_cpu_is_named_with_its_threads_counted_in_words():
    import torch

    from engine.device import device_name

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        assert device_name(torch.device("cpu")) == "CPU (1 thread)"  # (was "1 threads")
        torch.set_num_threads(2)
        assert device_name(torch.device("cpu")) == "CPU (2 threads)"
    finally:
        torch.set_num_threads(before)
