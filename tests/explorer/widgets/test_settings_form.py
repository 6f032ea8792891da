"""A settings form's refused fields and its problems take the presentation zoom and read on either theme. Marked
with style sheets of their own, they kept the font they had when marked (a zoom did not reach them), and the
problems' dark red was 2.2:1 on the dark theme, a refused field's light text on its pink 1.3:1."""

from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QApplication

from explorer.widgets.readable import TEXT, contrast
from tests.conftest import settle_layout


def a_form_with_a_problem(qtbot):
    from explorer.widgets.settings_form import SettingsForm

    form = SettingsForm()
    qtbot.addWidget(form)
    form.set_kind("bert", "base")
    form.show()
    form.editors["heads"].setValue(5)  # 768 is not a multiple of 5
    assert form.marked("heads") and form.marked("hidden") and form.problems
    return form


def readable_marks(form) -> bool:
    label = form.problem_label
    field = form.editors["heads"].palette()
    return (contrast(label.palette().color(QPalette.ColorRole.WindowText),
                     label.palette().color(QPalette.ColorRole.Window)) >= TEXT
            and contrast(field.color(QPalette.ColorRole.Text), field.color(QPalette.ColorRole.Base)) >= TEXT)


def test_the_refused_fields_and_the_problems_follow_the_zoom(qtbot):
    form = a_form_with_a_problem(qtbot)
    app = QApplication.instance()
    before = QFont(app.font())
    try:
        bigger = QFont(before)
        bigger.setPointSizeF(before.pointSizeF() * 2)
        app.setFont(bigger)
        app.processEvents()
        for widget in (form.problem_label, form.editors["heads"], form.editors["layers"]):
            assert widget.font().pointSizeF() == bigger.pointSizeF()
    finally:
        app.setFont(before)


def test_the_refused_fields_and_the_problems_read_on_either_theme(qtbot):
    from explorer.theme import apply_theme

    form = a_form_with_a_problem(qtbot)
    assert readable_marks(form)
    app = QApplication.instance()
    try:
        apply_theme(app, "dark")
        qtbot.waitUntil(lambda: form.palette().color(QPalette.ColorRole.Window).lightness() < 128, timeout=2_000)
        qtbot.waitUntil(lambda: readable_marks(form), timeout=2_000)
        assert form.editors["heads"].palette().color(QPalette.ColorRole.Base).lightness() < 128  # a dark red
        assert form.editors["layers"].palette().color(QPalette.ColorRole.Base) == form.palette().color(
            QPalette.ColorRole.Base)  # a field not refused: the theme's
    finally:
        apply_theme(app, "light")
    form.editors["heads"].setValue(12)  # fixed: the marks go
    assert not form.marked("heads") and not form.problem_label.isVisibleTo(form)


def test_a_refused_value_longer_than_a_line_is_quoted_by_its_start_and_keeps_the_form_its_width(qtbot):
    """3,000 letters typed into the learning rate: the problem quoted them all, and the form, laid out to fit that
    line, was 22,000 px wide (the Pretrain tab past the window's edge, its Start button out of sight)."""
    from explorer.widgets.settings_form import QUOTED_AT_MOST, SettingsForm

    form = SettingsForm()
    qtbot.addWidget(form)
    form.set_kind("bert", "tiny")
    form.resize(600, 500)
    form.show()
    form.editors["lr"].setText("a" * 3000)
    assert form.marked("lr") and len(form.problems) == 1
    assert form.problems[0].startswith("lr must be a number, not 'aaa") and len(form.problems[0]) < QUOTED_AT_MOST + 40
    QApplication.sendPostedEvents()
    QApplication.processEvents()
    assert form.width() == 600 and form.problem_label.width() <= 600 and form.problem_label.isVisible()


def a_form_scrolled_to_its_last_field(qtbot):
    """A BERT form too short for its fields, its last field just brought into view."""
    from explorer.widgets.settings_form import SettingsForm

    form = SettingsForm()
    qtbot.addWidget(form)
    form.set_kind("bert", "tiny")
    form.resize(420, 260)
    form.show()
    settle_layout()
    name = list(form.editors)[-1]
    form.bring_into_view(name)
    return form, form.editors[name], form.fields_view.verticalScrollBar()


def test_a_field_brought_into_view_stays_whole_while_the_form_settles_until_the_user_scrolls(qtbot):
    """A field set for the user far down the form is scrolled to; when the view then shrinks (a problem told below
    it) the field is brought back whole; once the user scrolls, the form stays where they put it."""
    form, editor, bar = a_form_scrolled_to_its_last_field(qtbot)

    def whole() -> bool:
        return editor.visibleRegion().boundingRect().height() == editor.height()

    qtbot.waitUntil(whole, timeout=5_000)
    form.resize(420, 180)  # the view shrinks under it
    qtbot.waitUntil(whole, timeout=5_000)
    bar.triggerAction(bar.SliderAction.SliderToMinimum)  # the user scrolls to the top
    form.resize(420, 150)
    for _ in range(3):
        settle_layout()
    assert bar.value() == 0 and not whole()


def test_a_field_brought_into_view_is_let_go_once_the_user_goes_to_another(qtbot):
    """A problem told while the user edits a field near the top does not pull the view back down."""
    form, _, bar = a_form_scrolled_to_its_last_field(qtbot)
    qtbot.waitUntil(lambda: bar.value() > 0, timeout=5_000)
    top = form.editors[next(iter(form.editors))]
    form.activateWindow()
    top.setFocus()  # the user goes to a field at the top: the view follows the focus there (no slider action)
    qtbot.waitUntil(top.hasFocus, timeout=5_000)
    bar.setValue(0)
    form.resize(420, 200)  # and shrinks: a problem told below the fields
    for _ in range(3):
        settle_layout()
    assert bar.value() == 0
