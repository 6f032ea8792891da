"""The attention maps' key labels: never on top of each other, as many as fit."""


def test_key_labels_never_overlap_and_keep_as_many_as_fit():
    from explorer.widgets.heatmap import fitting_labels

    labels = ("[CLS]", "she", "deposited", "the", "money", "at", "[SEP]")
    widths = [50, 30, 80, 30, 50, 20, 50]
    ticks = fitting_labels(labels, 50.0, widths)
    kept = [t for _, t in ticks]
    assert kept[0] == "[CLS]" and len(kept) >= 4  # only where a neighbour takes the room is a label left out
    spans = [((x * 50) - widths[labels.index(t)] / 2, (x * 50) + widths[labels.index(t)] / 2) for x, t in ticks]
    assert all(a[1] + 6 <= b[0] for a, b in zip(spans, spans[1:], strict=False))  # no two overlap
    assert len(fitting_labels(labels, 200.0, widths)) == len(labels)  # room for all: all shown
