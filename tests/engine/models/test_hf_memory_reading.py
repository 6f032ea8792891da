"""Hugging Face weights read into memory a tensor at a time (engine/models/hf_memory.py): the same tensors
safetensors itself reads, each in memory of its own, and a damaged file refused before any tensor is made."""

import json
import struct

import pytest
import torch

from engine.errors import CheckpointError
from engine.models.hf_memory import read_weights


def write_safetensors(path, tensors, header_extra=None, cut=0):
    """A safetensors file written by hand, tensors packed with no padding (so a tensor after an odd-sized
    one lies at an offset no wider type is aligned to)."""
    names = {torch.float32: "F32", torch.bfloat16: "BF16", torch.int64: "I64", torch.bool: "BOOL",
             torch.uint8: "U8", torch.float16: "F16"}
    header, blobs, at = {"__metadata__": {"format": "pt"}}, [], 0
    for key, t in tensors.items():
        raw = t.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[key] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    header.update(header_extra or {})
    head = json.dumps(header).encode()
    body = struct.pack("<Q", len(head)) + head + b"".join(blobs)
    path.write_bytes(body[: len(body) - cut])
    return path


def mixed():
    """Tensors on the CPU, as a file's bytes are read (whatever torch's default device)."""
    g, cpu = torch.Generator().manual_seed(0), torch.device("cpu")
    return {"odd": torch.arange(7, dtype=torch.uint8, device=cpu), "w": torch.randn(5, 3, generator=g, device=cpu),
            "half": torch.randn(4, generator=g, device=cpu).to(torch.bfloat16),
            "ids": torch.arange(6, device=cpu).reshape(2, 3), "mask": torch.tensor([True, False, True], device=cpu),
            "empty": torch.zeros(0, 4, device=cpu), "f16": torch.ones(2, 2, device=cpu).half()}


def test_the_tensors_are_those_safetensors_reads_each_in_its_own_memory(tmp_path):
    from safetensors.torch import load

    path = write_safetensors(tmp_path / "model.safetensors", mixed())
    ours, theirs = read_weights(path), load(path.read_bytes())
    assert set(ours) == set(theirs) == set(mixed())
    for key in theirs:
        assert ours[key].dtype == theirs[key].dtype and torch.equal(ours[key], theirs[key]), key
    pointers = {t.untyped_storage().data_ptr() for t in ours.values() if t.numel()}
    assert len(pointers) == sum(1 for t in ours.values() if t.numel())  # no two share one buffer
    ours["w"].add_(1)  # writable, and its own: the file is untouched
    assert torch.equal(read_weights(path)["w"], mixed()["w"])
    with torch.device("meta"):  # another default device (CUDA on a GPU machine): a file is still read into memory
        elsewhere = read_weights(path)
    assert all(t.device.type == "cpu" for t in elsewhere.values()) and torch.equal(elsewhere["ids"], mixed()["ids"])


@pytest.mark.parametrize("damage", ["truncated", "header too long", "not json", "offsets outside",
                                    "size disagrees", "unknown type", "not a table"])
def test_a_damaged_file_is_refused_with_a_checkpoint_error(tmp_path, damage):
    path = tmp_path / "model.safetensors"
    if damage == "truncated":
        write_safetensors(path, mixed(), cut=5)
    elif damage == "header too long":
        path.write_bytes(struct.pack("<Q", 10**9) + b"{}")
    elif damage == "not json":
        path.write_bytes(struct.pack("<Q", 4) + b"\xff{x}")
    elif damage == "offsets outside":
        write_safetensors(path, {"w": torch.ones(2)}, {"w": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})
    elif damage == "size disagrees":
        write_safetensors(path, {"w": torch.ones(2)}, {"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})
    elif damage == "unknown type":
        write_safetensors(path, {"w": torch.ones(2)}, {"w": {"dtype": "Q4", "shape": [2], "data_offsets": [0, 8]}})
    else:
        head = b"[1, 2]"
        path.write_bytes(struct.pack("<Q", len(head)) + head)
    with pytest.raises(CheckpointError):
        read_weights(path)


def test_a_hugging_face_folder_loads_the_same_weights_as_transformers_reads():
    from transformers import AutoModelForMaskedLM

    from engine.models.hf_memory import from_pretrained_in_memory
    from engine.models.masked_lm_head import base_folder

    folder = base_folder("all-minilm-l6-v2")
    ours, info = from_pretrained_in_memory(AutoModelForMaskedLM, folder, local_files_only=True,
                                           output_loading_info=True)
    theirs = AutoModelForMaskedLM.from_pretrained(folder, local_files_only=True)
    assert type(ours) is type(theirs)
    fresh = set(info["missing_keys"])  # the masked-LM head MiniLM does not ship: both start it at random
    assert fresh and all(k.startswith("cls.") for k in fresh)
    mine, reference = ours.state_dict(), theirs.state_dict()
    assert set(mine) == set(reference)
    assert all(torch.equal(mine[k], reference[k]) for k in reference if k not in fresh)
