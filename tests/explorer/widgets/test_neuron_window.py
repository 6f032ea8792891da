"""The window that shows what makes an MLP neuron fire (explorer/widgets/neuron_window.py): the sentences where it is
highest, each token shaded by its output, the highest in bold; what it writes into the logits or why not; a neuron
asked while another is on its way replaces it; Cancel stops the corpus being read."""

import numpy as np
import pytest

from engine import api
from engine.lab_results import NeuronExample
from explorer.widgets.neuron_window import NeuronWindow, sentence_html


@pytest.fixture(scope="module")
def gpt(contextual_runs):
    return api.load(contextual_runs["gpt"][0])


def test_a_sentence_shades_each_token_by_the_neurons_output_and_joins_word_pieces():
    pieces = NeuronExample("[CLS] play ##ing it [SEP]", ("[CLS]", "play", "##ing", "it", "[SEP]"),
                           (True, False, False, False, True), np.array([9.0, 1.0, 2.0, -1.0, 9.0], np.float32))
    text = sentence_html(pieces, 2.0)
    assert "[CLS]" not in text and "+2.00" in text  # its highest, not a special token's
    assert "play</span><span" in text and "<b><u>ing</u></b>" in text  # "playing": one word, its highest in bold
    assert "0.50)\">play" in text and "1.00)\"><b><u>ing" in text and "0.00)\">it" in text  # negative: clear
    spaced = NeuronExample("a <b> c", ("<|endoftext|>", "a", " <b>", " c"), (True, False, False, False),
                           np.array([0.0, 1.0, 4.0, 0.0], np.float32), cut=True)
    text = sentence_html(spaced, 4.0)
    assert "a</span> <span" in text and "&lt;b&gt;" in text  # byte-level tokens keep their own spaces; escaped
    assert text.endswith("…</td></tr>") and "…" not in sentence_html(pieces, 2.0)  # read only in part


def test_a_neuron_asked_shows_its_sentences_and_what_it_writes(qtbot, gpt):
    window = NeuronWindow()
    qtbot.addWidget(window)
    window.show_neuron(gpt, 1, 3)
    qtbot.waitUntil(lambda: window.result is not None, timeout=60_000)
    result = window.result
    expected = api.neuron_examples(gpt, 1, 3, k=len(result.examples))
    assert [e.text for e in result.examples] == [e.text for e in expected.examples]
    html = window.sentences.toHtml()
    assert html.count("text-decoration: underline") == len(result.examples) and not window.busy.isVisible()
    assert "layer 2's MLP, neuron 3 of" in window.summary.text() and "held-out sentences" in window.summary.text()
    assert "up '" in window.writes.text() and "down '" in window.writes.text()  # (our GPT: pre-LN)
    assert window.neuron.maximum() == result.neurons - 1 and window.layer.maximum() == 2
    rows = window.export_rows()  # (right-click: CSV, a row a token)
    first = result.examples[0]
    peak = next(r for r in rows[1:] if r[3] == "1" and r[7] == "yes")
    assert rows[0][:4] == ["model", "layer", "neuron", "sentence"] and peak[:3] == [gpt.name, "2", "3"]
    assert int(peak[4]) == first.peak and float(peak[6]) == pytest.approx(result.highest, rel=1e-5)
    assert len(rows) - 1 == sum(not s for e in result.examples for s in e.special)


def test_a_newer_neuron_replaces_one_on_its_way_and_cancel_stops(qtbot, gpt):
    window = NeuronWindow()
    qtbot.addWidget(window)
    window.show_neuron(gpt, 0, 1)
    window.neuron.setValue(7)
    window.show_button.click()  # asked before the first answered
    qtbot.waitUntil(lambda: window.result is not None, timeout=60_000)
    assert (window.result.layer, window.result.neuron) == (0, 7)
    from engine.handles.neuron_examples import _PEAKS

    _PEAKS.get(gpt, {}).clear()  # (the corpus read again: a job long enough to cancel)
    window.layer.setValue(2)
    window.show_button.click()
    assert window.busy.isVisible()
    job = window.job
    window.cancel.click()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert "Cancelled" in window.summary.text() and window.result is None and not window.busy.isVisible()


def test_a_post_ln_models_neuron_says_why_not_what_it_writes(qtbot, contextual_runs):
    window = NeuronWindow()
    qtbot.addWidget(window)
    window.show_neuron(api.load(contextual_runs["bert"][0]), 0, 0)
    qtbot.waitUntil(lambda: window.result is not None, timeout=60_000)
    assert "not read here" in window.writes.text() and "post-LN" in window.writes.text()


def test_a_word_finds_the_layers_neurons_for_it_and_a_click_shows_one(qtbot):
    """gpt-tiny's layer 3, "my": its "my" neuron (#27) first; clicked, its sentences."""
    window = NeuronWindow()
    qtbot.addWidget(window)
    gpt = api.load("gpt-tiny")  # (held here, as the session holds a loaded model: the window holds it weakly)
    window.show_neuron(gpt, 2, 0)
    qtbot.waitUntil(lambda: window.result is not None, timeout=60_000)
    window.by_word.word.setText("my")
    window.by_word.find_button.click()
    row = window.by_word
    qtbot.waitUntil(lambda: row.result is not None, timeout=60_000)
    assert row.table.isVisible() and row.table.horizontalHeaderItem(0).text() == "#27"
    assert "most selective for 'my'" in row.note.text() and "mean" in row.table.item(0, 0).toolTip()
    row.table.cellClicked.emit(0, 0)
    qtbot.waitUntil(lambda: window.result is not None and window.result.neuron == 27, timeout=60_000)
    assert window.neuron.value() == 27 and window.layer.value() == 3
    window.by_word.word.setText("two words")
    window.by_word.find_button.click()
    qtbot.waitUntil(lambda: "one word" in row.note.text(), timeout=30_000)

