"""engine/data/safetensors_torch.py: a safetensors file read into torch tensors gives what safetensors wrote and its
metadata, each tensor writable and its own, leaves nothing behind, and a damaged file is refused with the reason
(more damaged files: tests/engine/models/test_hf_memory_reading.py)."""

import gc
import sys

import pytest
import torch
from safetensors.torch import save_file

from engine.data.safetensors_torch import read_safetensors
from engine.errors import CheckpointError


@pytest.fixture
def written(tmp_path):
    generator = torch.Generator().manual_seed(0)
    tensors = {"w": torch.randn(7, 5, generator=generator), "half": torch.randn(3, generator=generator).half(),
               "brain": torch.randn(4, 2, generator=generator).bfloat16(), "ids": torch.arange(-3, 9),
               "mask": torch.tensor([True, False, True]), "scalar": torch.tensor(2.5), "empty": torch.zeros(0, 4)}
    path = tmp_path / "model.safetensors"
    save_file(tensors, str(path), metadata={"save_id": "abc", "step": "12"})
    return path, tensors


def test_the_tensors_and_metadata_are_those_written(written):
    path, tensors = written
    got, metadata = read_safetensors(path)
    assert metadata == {"save_id": "abc", "step": "12"}
    assert set(got) == set(tensors)
    for name, tensor in tensors.items():
        assert got[name].dtype == tensor.dtype and got[name].shape == tensor.shape, name
        assert torch.equal(got[name], tensor), name
    got["w"] += 1  # writable, and its own: no other tensor shares its memory
    assert torch.equal(got["w"], tensors["w"] + 1)
    assert got["w"].untyped_storage().data_ptr() != got["half"].untyped_storage().data_ptr()


def test_reading_leaves_no_object_behind(written):
    """safetensors 0.8's safe_open(framework="pt") left ~3 ints behind for every tensor it read."""
    path, _ = written
    read_safetensors(path)
    gc.collect()
    before = sys.getallocatedblocks()
    for _ in range(30):
        read_safetensors(path)
    gc.collect()
    assert sys.getallocatedblocks() - before < 30  # 7 tensors a read: 3 a tensor would be 630


@pytest.mark.parametrize("damage", ["truncated", "header", "offsets", "short header"])
def test_a_damaged_file_is_refused_with_what_is_wrong(written, damage):
    path, _ = written
    data = path.read_bytes()
    length = int.from_bytes(data[:8], "little")
    if damage == "truncated":
        path.write_bytes(data[: len(data) - 10])
    elif damage == "header":
        path.write_bytes(data[:8] + b"{" * length + data[8 + length:])
    elif damage == "offsets":
        header = data[8:8 + length].replace(b'"data_offsets":[0,', b'"data_offsets":[1,', 1)
        path.write_bytes(data[:8] + header + data[8 + length:])
    else:
        path.write_bytes((10**12).to_bytes(8, "little") + data[8:])
    with pytest.raises(CheckpointError, match="truncated|not JSON|does not fit|not a safetensors file|wrongly"):
        read_safetensors(path)
