"""The lens's "All models" view: occurrences two models both put near a typed occurrence are marked."""

from types import SimpleNamespace

from explorer.panels.polysemy.text import compare_html, shared_hits


def hit(sentence, similarity=0.9):
    return SimpleNamespace(sentence=sentence, similarity=similarity)


def test_occurrences_two_models_share_are_marked():
    river, money, other = "The bank of the river flooded.", "The bank raised its rates.", "A bank holiday."
    a = ("model a", 2, [("by the river", [hit(river), hit(other)]), ("for money", [hit(money)])])
    b = ("model b", 4, [("by the river", [hit(river)]), ("for money", [hit(other)])])
    assert shared_hits([a, b]) == {(0, river)}  # the same sentence near the same typed occurrence
    page = compare_html(a[0], "bank", a[1], a[2], [b], ["#000", "#111"])
    assert page.count("◆ 0.90") == 2 and "◆ marks" in page  # once in each model's column
    assert "◆" not in compare_html(a[0], "bank", a[1], a[2], [], ["#000"])  # one model: nothing to share


def test_static_rows_shrink_to_one_line_when_the_table_widens(qtbot):
    from explorer.panels.polysemy.static import StaticNeighbours
    from explorer.session import Session

    box = StaticNeighbours(Session())
    qtbot.addWidget(box)
    box.resize(300, 300)
    box.show()
    long = ", ".join(f"word{i} 0.{90 - i}" for i in range(8))
    box._show([("glove-6b-50d", long, "", "", ("0.50", "")), ("word2vec-sgns", long, "", "", ("0.61", ""))])
    narrow = box.table.rowHeight(0)
    box.resize(1800, 300)  # the window laid out at its full width (a talk at 1920 px)
    qtbot.waitUntil(lambda: box.table.rowHeight(0) < narrow, timeout=3_000)


def test_a_deleted_static_column_is_let_go_by_the_session(qtbot):
    """A lens panel closed (its static column deleted with it): the session's later change of the neighbours'
    threshold reaches nothing deleted (the chaos bench found a connection that outlived its column)."""
    import shiboken6
    from PySide6.QtWidgets import QApplication

    from explorer.panels.polysemy.static import StaticNeighbours
    from explorer.session import Session

    session = Session()
    box = StaticNeighbours(session)
    box.query("bank")
    box.deleteLater()
    QApplication.sendPostedEvents(None, 0)  # (the deferred delete)
    qtbot.waitUntil(lambda: not shiboken6.isValid(box), timeout=3_000)
    with qtbot.capture_exceptions() as raised:
        session.set_seen_at_least(3)
    assert not raised


def test_the_word_sentences_share_is_the_longest_repeated_one_and_none_where_none_repeats():
    from explorer.panels.polysemy.text import repeated_word

    assert repeated_word(["He will play Hamlet on the stage.", "They play the match tonight."]) == "play"
    assert repeated_word(["The Bank of England.", "We sat on the bank."]) == "bank"  # (any case)
    assert repeated_word(["A cat sat.", "A dog ran."]) == "a"  # a short word, when it is the only one shared
    # a word that means something before a function word as long as it ("the" came first, and won)
    assert repeated_word(["The bus stopped near the market.", "We took the bus home."]) == "bus"
    assert repeated_word(["It was there before.", "They were there before it."]) == "before"  # (all of them: longest)
    assert repeated_word(["A cat sat.", "The dog ran."]) == "" == repeated_word([])
