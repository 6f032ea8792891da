"""A talk's lens step about contextual vectors alone shows no empty static box: "no static model loaded (GloVe,
word2vec)" was a row of noise on the slide. The window's lens still says it, and a talk's static step keeps it."""

from explorer.scenes import check_scene


def a_scene(view: str):
    return check_scene({"panel": "polysemy", "sentences": ["We sat on the bank of the river."], "selection": "bank",
                        "models": ["minilm-mlm"], "contextual_model": "minilm-mlm", "view": view}, "a test's scene")


def test_a_talk_step_without_a_static_model_shows_no_static_box(qtbot):
    from explorer.panels.polysemy.panel import PolysemyPanel
    from explorer.session import Session

    panel = PolysemyPanel(Session())  # (no model loaded: none static)
    qtbot.addWidget(panel)
    panel.show()
    panel.set_presenting(True)
    panel.apply_scene(a_scene("map"))
    assert panel.static.isHidden() and not panel.contextual_box.isHidden()
    panel.apply_scene(a_scene("static"))  # a static step: its message is the slide's answer
    assert not panel.static.isHidden()
    panel.apply_scene(a_scene("map"))
    panel.set_presenting(False)  # the window's lens: the box, saying why it is empty
    panel.apply_scene(a_scene("map"))
    assert not panel.static.isHidden()
    assert "no static model loaded" in panel.static.table.item(0, 1).text()
