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

