"""A talk's static neighbours end after the last whole entry that fits ("credit 0.76, …"), not mid-number."""

from PySide6.QtGui import QFontMetrics

LIST = ("banks 0.87, securities 0.80, banking 0.80, investment 0.78, exchange 0.78, financial 0.77, credit 0.76, "
        "lender 0.75")


def test_a_list_is_cut_after_its_last_whole_entry(qapp):
    from explorer.widgets.whole_entries import whole_entries

    metrics = QFontMetrics(qapp.font())
    whole = metrics.horizontalAdvance(LIST)
    assert whole_entries(LIST, metrics, whole) == LIST
    for width in (whole - 1, whole // 2, whole // 4):
        cut = whole_entries(LIST, metrics, width)
        assert cut.endswith(", …") and metrics.horizontalAdvance(cut) <= width
        kept = cut.removesuffix(", …").split(", ")
        assert kept == LIST.split(", ")[:len(kept)]  # whole entries, in order, none cut inside
        one_more = ", ".join(LIST.split(", ")[:len(kept) + 1]) + ", …"
        assert metrics.horizontalAdvance(one_more) > width  # as many as fit
    assert whole_entries(LIST, metrics, metrics.horizontalAdvance("banks")) == "…"


def test_a_talks_static_table_draws_each_list_to_its_last_whole_entry(qtbot):
    from PySide6.QtWidgets import QStyleOptionViewItem

    from explorer.panels.polysemy.static import StaticNeighbours
    from explorer.session import Session

    box = StaticNeighbours(Session())
    qtbot.addWidget(box)
    box.resize(700, 200)
    box.set_compact(True)
    box._show([("glove-6b-50d", LIST, "", "", ("0.50", ""))])
    box.show()
    qtbot.waitExposed(box)
    table = box.table
    index = table.model().index(0, 1)
    option = QStyleOptionViewItem()
    option.initFrom(table)
    option.rect = table.visualRect(index)
    option.widget = table
    table.itemDelegateForColumn(1).initStyleOption(option, index)
    assert option.text.endswith(", …") and option.text.removesuffix(", …") in LIST
    assert table.item(0, 1).text() == LIST  # the cell keeps the whole list (copy, CSV)
    box.set_compact(False)
    assert table.itemDelegateForColumn(1) is table.itemDelegate()  # the lens's own tab wraps the list instead
