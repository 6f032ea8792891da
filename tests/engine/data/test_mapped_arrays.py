"""Long-lived matrices in mappings of their own, marked for huge pages (engine/data/mapped_arrays.py): the static
vectors' unit rows live there, answer as before, and their mapping goes when the model does."""

import gc
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.data.keyed_vectors import StaticVectors
from engine.data.mapped_arrays import HUGE_AT_LEAST, is_mapped_here, mapped_empty

THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")
linux_thp = pytest.mark.skipif(not (sys.platform.startswith("linux") and THP.exists()),
                               reason="Linux's transparent huge pages")


def flags_at(address: int) -> str | None:
    """The VmFlags of the mapping that holds ``address`` (None: no mapping holds it)."""
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split(" ", 1)[0]
        if "-" in head and ":" not in head:
            low, high = (int(x, 16) for x in head.split("-"))
            inside = low <= address < high
        elif inside and line.startswith("VmFlags:"):
            return line.split(":", 1)[1]
    return None


def owner(array: np.ndarray) -> object:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array.base


@linux_thp
def test_a_big_array_has_a_marked_mapping_of_its_own_that_goes_with_it():
    array = mapped_empty((HUGE_AT_LEAST // 4 // 50 + 10, 50), np.float32)
    assert array.flags.c_contiguous and array.flags.writeable and array.dtype == np.float32
    array[...] = 2.5
    assert float(array.sum()) == 2.5 * array.size
    assert is_mapped_here(owner(array))
    address = array.ctypes.data
    assert "hg" in (flags_at(address) or "").split()  # madvise(MADV_HUGEPAGE) on it
    del array
    gc.collect()
    assert flags_at(address) is None  # unmapped with the array, mark and all


def test_a_small_array_is_a_plain_one():
    array = mapped_empty((10, 50), np.float32)
    assert array.base is None and array.shape == (10, 50) and not is_mapped_here(owner(array))


@linux_thp
def test_static_vectors_scan_unit_rows_in_huge_pages_and_answer_as_before():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(30_000)]
    vectors = rng.standard_normal((len(words), 50)).astype(np.float32)
    vectors[1] = vectors[0] * 3 + 0.01  # w1: w0's direction
    model = StaticVectors(words, vectors)
    assert is_mapped_here(owner(model.unit))
    assert "hg" in (flags_at(model.unit.ctypes.data) or "").split()
    expected = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    np.testing.assert_allclose(model.unit, expected, rtol=1e-6)
    assert model.neighbours("w0", 1)[0][0] == "w1"
