"""Try it shows what the user typed and what the model said as text: a context with "<" or a tag named "<b>"
reads as typed (before, the label took them for markup and the words vanished)."""

from engine.api import Answer, Classification, Tagging
from explorer.widgets.finetune_results import TryIt


def test_try_it_shows_typed_markup_as_text(qtbot):
    w = TryIt()
    qtbot.addWidget(w)
    w.show_result(Answer("x < y and <b>z</b>", 0, 17, 3.0, "but it scores \u201cno answer\u201d higher"))
    shown = w.result.text()
    assert "x &lt; y and &lt;b&gt;z&lt;/b&gt;" in shown and "\u2014 but it scores" in shown
    w.show_result(Tagging(("I", "<3", "Paris"), ("O", "<b>", "B-LOC"), (0.9, 0.8, 0.9), (("LOC", "Paris"),), ""))
    assert "&lt;3" in w.result.text() and "&lt;b&gt;" in w.result.text() and "LOC: Paris" in w.result.text()
    w.show_result(Classification("a <i>", ("<pos>", "neg"), (0.8, 0.2), ""))
    assert w.result.text().startswith("<b>&lt;pos&gt;</b> (80.0%)")
    assert "\u2014" not in w.result.text()  # no notice, no dash
