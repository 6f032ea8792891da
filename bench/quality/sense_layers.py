"""Which layer the polysemy lens opens each contextual model at, and why: sense separation per layer on the
development sense set (engine/data/sets/senses_dev.tsv, 24 words × 2 senses × 8 sentences), where the choice is
made, beside the sense set the scores are reported on (senses.tsv, 11 other words × 2 × 8), where nothing is chosen.

The rule (``engine.inspection.quality.clear_sense_layer``, declared before the development set was written): a model
opens at its last layer unless its best layer on the development set leads the last by more than the noise — the lower
end of the 95% interval of a bootstrap over the set's words above 0. The catalog's ``sense_layer`` must agree
(tests/engine/handles/test_load.py measures it the same way).

    python bench/quality/sense_layers.py [--models elmo-tiny,gpt-tiny,...]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import loaded_models, machine, write_section  # noqa: E402
from engine import api  # noqa: E402
from engine.inspection.quality import (  # noqa: E402
    sense_chance,
    sense_dev_items,
    sense_items,
    sense_layer_lead,
    sense_separation,
)

MODELS = "elmo-tiny,gpt-tiny,bert-tiny,minilm-gpt,minilm-mlm,all-minilm-l6-v2"


def scores_text(scores: Iterable[float], mark: int) -> str:
    return " · ".join(f"**{s:.3f}**" if layer == mark else f"{s:.3f}" for layer, s in enumerate(scores))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--models", default=MODELS)
    args = p.parse_args()
    api.one_thread_here()
    dev, test = sense_dev_items(), sense_items()
    lines = ["## Which layer the polysemy lens opens a model at (the development sense set)", "",
             f"Machine: {machine()}", "",
             "Command: `python bench/quality/sense_layers.py`. Sense separation (leave-one-out nearest occurrence of "
             f"the same word; layer 0 the embeddings) on the **development** set ({len(dev)} sentences, "
             f"{len({i.word for i in dev})} words; chance {sense_chance(dev):.3f}), where the layer is chosen, and on "
             f"the **test** set ({len(test)} sentences, {len({i.word for i in test})} other words; chance "
             f"{sense_chance(test):.3f}), where every reported sense separation comes from and nothing is chosen. "
             "The rule: the last layer, unless the best development layer's lead over it has a 95% bootstrap "
             "interval (over words) above 0. The chosen layer is in bold.", "",
             "| model | development set, by layer | best − last (95% interval) | opens at | catalog | test set, by layer |",
             "|---|---|---|---:|---:|---|"]
    for name, handle in loaded_models(args.models.split(",")):
        found = sense_layer_lead(handle, dev)
        opens = found.opens_at
        lead = (f"layer {found.best}: {found.lead:+.3f} ({found.low:+.3f} … {found.high:+.3f})"
                if found.best != found.top else "the last is best")
        catalog = api.sense_layer(handle.info)
        tested = sense_separation(handle, test)
        lines.append(f"| {name} | {scores_text(found.scores, opens)} | {lead} | {opens} | "
                     f"{catalog}{'' if catalog == opens else ' (differs!)'} | {scores_text(tested, opens)} |")
        print(lines[-1], flush=True)
        del handle
        api.release_memory()
    lines += ["", "Read: where the interval reaches below 0, the best layer's lead is within what another draw of "
              "words would give, so the lens keeps the model's last layer (the one its training shaped for its "
              "output). bert-tiny and minilm-mlm were taught senses at their last layer on other words "
              "(sense_train.tsv); no word of either sense set is among them."]
    write_section("sense-layers", "\n".join(lines))


if __name__ == "__main__":
    main()
