"""The masked view with ELMo: its blank filled by its two language models, beside a BERT's, and said so."""

from tests.explorer.panels.test_attention_predictions import load


def test_elmo_fills_the_blank_beside_bert_and_the_view_says_how(qtbot, window, contextual_runs):
    panel = window.predictions
    window.tabs.setCurrentWidget(panel)
    load(qtbot, window, contextual_runs["bert"][0], contextual_runs["elmo"][0], contextual_runs["gpt"][0])
    view = panel.masked
    assert view.model.usable() == ["bert", "elmo"]  # (GPT reads left to right: listed, and says why not)
    assert "left to right" in view.model.reasons["gpt"]
    view.model.setCurrentIndex(view.model.findText("elmo"))
    view.compare.setChecked(True)
    view.model2.setCurrentIndex(view.model2.findText("bert"))
    with qtbot.waitSignal(view.shown, timeout=30_000):
        view.text.setText("She played the [MASK] on stage.")
    qtbot.waitUntil(lambda: view.results[1].toPlainText().startswith("bert"), timeout=30_000)
    elmo_rows = view.results[0].toPlainText().splitlines()
    assert elmo_rows[0] == "elmo" and len([row for row in elmo_rows if row.endswith("%")]) == 8
    assert "elmo has no masked LM" in view.hint.text() and "two guesses multiplied" in view.hint.text()
    sides = dict(view.last.per_model[0][1].value[0].sides)  # each LM's own guess, named
    assert "before the blank, guesses " + ", ".join(f"“{w}”" for w in sides["before"]) + "; " in view.hint.text()
    assert "bert has no" not in view.hint.text()
    emitted = []
    panel.focus_token.connect(lambda text, position: emitted.append(position))
    view._prediction_clicked(0, 0)  # ELMo's: it has no heads to show where the blank attends
    view._prediction_clicked(1, 0)  # BERT's: the attention panel opens on the blank
    assert emitted == [view._positions[1][0]]
    view.lens_switch.setChecked(True)  # ELMo's lab reads its forward LM: it says where to ask instead
    qtbot.waitUntil(lambda: "Next token view" in view.lens.grid_note.text(), timeout=30_000)
