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
    assert not view.learn.isEnabled() and "trained to predict each next word" in view.learn.toolTip()
    emitted = []
    panel.focus_token.connect(lambda text, position: emitted.append(position))
    view._prediction_clicked(0, 0)  # ELMo's: it has no heads to show where the blank attends
    view._prediction_clicked(1, 0)  # BERT's: the attention panel opens on the blank
    assert emitted == [view._positions[1][0]]
    with qtbot.waitSignal(view.lens.shown, timeout=60_000):  # every layer's word at every word, from both sides
        view.lens_switch.setChecked(True)
    grid = view.lens.grid
    assert "elmo, the logit lens" in view.lens.grid_note.text() and "two LMs" in view.lens.grid_note.text()
    blank = [grid.horizontalHeaderItem(c).text() for c in range(grid.columnCount())].index("[MASK]")
    first = next(row for row in elmo_rows if row.endswith("%")).split("\t")[0]
    assert grid.item(0, blank).text() == first  # its top row: the bars' first word
    view.lens.tracing.subject.setText("played")  # why that answer: each word's state put back in the LM that reads it
    with qtbot.waitSignal(view.lens.shown, timeout=60_000):
        view.lens.tabs.setCurrentWidget(view.lens.tracing)
        view.lens.trace()
    traced = view.lens.trace_result
    assert traced.tokens[traced.position] == "[MASK]" and traced.target == first
    page = view.lens.attribution  # which words the blank rests on: ELMo's (both LMs) and BERT's, word by word
    with qtbot.waitSignal(page.shown, timeout=60_000):
        view.lens.tabs.setCurrentWidget(page)
    table = page.table
    assert [table.verticalHeaderItem(r).text() for r in range(2)] == ["integrated gradients · elmo",
                                                                     "integrated gradients · bert"]
    columns = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    assert columns == ["she", "played", "the", "[MASK]→", "on", "stage", "."]  # ELMo's <s> and BERT's [CLS]: no words
    assert page.result.tokens[page.result.position] == "[MASK]" and page.compared is not None
    blank = columns.index("[MASK]→")
    assert table.item(0, blank).text() == "" and any(table.item(0, c).text() not in ("", "+0.00")
                                                    for c in range(blank + 1, len(columns)))  # after the blank too
    # in the app's default window, the bars above the lab keep their room: the table asks for its rows, not for
    # Qt's 192 pixels, which a page's height for its width made its smallest height (the bars were cut to two rows)
    from tests.conftest import settle_layout

    window.tabs.setCurrentWidget(panel)  # (BERT's click above opened the attention panel)
    window.resize(1200, 760)  # the default (a window an earlier test closed may have left its own size kept)
    assert page.isVisible()
    settle_layout()
    area = view.result_areas[0]
    assert area.viewport().height() >= 6 * area.fontMetrics().height()
    assert table.verticalScrollBar().maximum() == 0  # (and the table shows all its rows)
