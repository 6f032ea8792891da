"""``word2bert-eval MODEL --against B``: every layer of MODEL against every layer of B (linear CKA over the words of
held-out sentences; engine.inspection.layer_similarity), as a table or JSON; with ``--all-checkpoints``, each kept
checkpoint of the run against B depth by depth — B the run itself (its last save) shows which layers settle first."""

from __future__ import annotations

import json
import sys
from typing import Any

from engine.errors import Word2BertError


def _names(layers: int) -> list[str]:
    return ["input", *(f"layer {i}" for i in range(1, layers))]


def table(result: Any) -> str:
    """The CKA table for people: a row per layer of A (the input first), a column per layer of B."""
    cols = _names(result.cka.shape[1])
    width = max(len(c) for c in cols) + 1
    lines = [f"{result.model_a} (rows) against {result.model_b} (columns): linear CKA"
             + (" (debiased)" if result.debiased else "") + f" over {result.words:,} words of {result.sentences} "
             "sentences" + (f" ({result.skipped} left out: split into other words)" if result.skipped else ""),
             " " * 8 + "".join(c.rjust(width) for c in cols)]
    for name, row in zip(_names(result.cka.shape[0]), result.cka, strict=True):
        lines.append(name.ljust(8) + "".join(f"{v:.3f}".rjust(width) for v in row))
    return "\n".join(lines)


def as_dict(result: Any) -> dict[str, Any]:
    return {"model": result.model_a, "against": result.model_b, "cka": [[round(float(v), 6) for v in row]
            for row in result.cka], "words": result.words, "sentences": result.sentences, "skipped": result.skipped,
            "debiased": result.debiased}


def against_main(model: str, against: str, sentences: int, corpus: str | None, debiased: bool,
                 every_checkpoint: bool, as_json: bool) -> int:
    from engine.data.corpora import spread_sample
    from engine.handles.load import load
    from engine.inspection.history_scores import checkpoint_settling
    from engine.inspection.layer_similarity import layer_similarity

    try:
        other = load(against)
        if not every_checkpoint:
            sample = spread_sample(corpus or "default", sentences, "heldout")
            result = layer_similarity(load(model), other, sample, debiased=debiased)
            print(json.dumps(as_dict(result)) if as_json else table(result), flush=True)
            return 0
        print(f"word2bert-eval: each checkpoint of {model} against {other.name} depth by depth (linear CKA over "
              f"{sentences} held-out sentences of {corpus or 'the run’s corpus'}; rows compared before are read from "
              "the cache folder)", file=sys.stderr, flush=True)
        for row in checkpoint_settling(model, against=against, sentences=sentences, corpus=corpus,
                                       debiased=debiased):
            if "error" in row:
                raise Word2BertError(f"step {row['step']:,}: {row['error']}")
            print(json.dumps(row) if as_json else f"step {row['step']:,}: " + " ".join(f"{v:.3f}" for v in row["settled"]),
                  flush=True)
    except (Word2BertError, ValueError) as e:
        print(f"word2bert-eval: {e}", file=sys.stderr)
        return 2
    return 0
