"""Talk decks: ``{"title": ..., "steps": [step, ...]}`` in plain JSON. A step is a scene (see
explorer.scenes) with a one-line ``title``, or ``{"scene": "bank", "title": ...}`` naming a built-in
scene (its fields can be overridden). No Qt here: decks load, check and save on their own."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.scenes import Scene, SceneError, check_scene, load_scene
from explorer.shortened import shortened

BUILTIN_DECK = Path(__file__).resolve().parent / "seeds.json"
MAX_DECK_BYTES = 1_000_000
MAX_STEPS = 200
TITLE_WORDS_AT_MOST = 60  # the characters of the sentence or word a step's made-up title quotes
PANEL_NAMES = {"polysemy": "Polysemy lens", "neighbours": "Neighbours", "attention": "Attention",
               "predictions": "Predictions", "curves": "Fine-tuning curves", "layers": "Layer similarity"}


@dataclass
class Deck:
    """A talk: its title and its steps (scenes, each with a one-line title)."""

    title: str = ""
    steps: list[Scene] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "steps": [step.to_json() for step in self.steps]}


def load_deck(path: str | Path | None = None) -> Deck:
    """The deck at ``path`` (default: the built-in one), every step checked and expanded."""
    path = Path(path) if path is not None else BUILTIN_DECK
    try:
        if not path.is_file():
            raise SceneError(f"no deck file {path}")
        if path.stat().st_size > MAX_DECK_BYTES:
            raise SceneError(f"{path} is larger than {MAX_DECK_BYTES // 1000} kB: not a deck")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise SceneError(f"{path} is not a deck file ({e})") from None
    return check_deck(data, str(path))


def check_deck(data: Any, origin: str = "the deck") -> Deck:
    if isinstance(data, Deck):
        data = data.to_json()
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        raise SceneError(f"{origin} is not a deck (it needs a list of 'steps')")
    if not data["steps"]:
        raise SceneError(f"{origin} has no steps")
    if len(data["steps"]) > MAX_STEPS:
        raise SceneError(f"{origin} has {len(data['steps'])} steps; at most {MAX_STEPS}")
    steps = [expand_step(step, f"{origin}, step {i + 1}") for i, step in enumerate(data["steps"])]
    title = data.get("title", "")
    return Deck(title if isinstance(title, str) else "", steps)


def expand_step(step: Any, origin: str) -> Scene:
    if isinstance(step, dict) and "scene" in step:
        if not isinstance(step["scene"], str):
            raise SceneError(f"{origin}: 'scene' must be a built-in scene's name")
        base = load_scene(step["scene"]).to_json()
        step = {**base, **{k: v for k, v in step.items() if k != "scene"}}
    scene = check_scene(dict(step) if isinstance(step, dict) else step, origin)
    if scene.title is None:
        scene.title = step_title(scene)
    return scene


def step_title(scene: Scene) -> str:
    """A title for a view added from the main window (the speaker can edit it); a long sentence is quoted by its
    start (a pasted paragraph with no spaces, as one line of a talk's title type, laid the talk window out
    93,000 px wide)."""
    panel = PANEL_NAMES.get(scene.panel, "View")
    what = shortened(scene.selection or (scene.sentences or [""])[0], TITLE_WORDS_AT_MOST)
    model = scene.contextual_model or ""
    if scene.panel == "layers" and scene.compare:
        model = f"{model} against {scene.compare}"
    return " — ".join(p for p in (panel, f"“{what}”" if what else "", model) if p)


def save_deck(path: str | Path, deck: Deck) -> None:
    checked = check_deck(deck)
    text = json.dumps(checked.to_json(), indent=2, ensure_ascii=False) + "\n"
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)  # a deck is never left half written
