"""Scenes: a panel's state in a small JSON file (sentences, selected word, models, layer, view), so a
demo is one click away. The built-in ones live here; users save their own anywhere."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

BUILTIN = Path(__file__).resolve().parent
FIELDS = {"panel", "title", "sentences", "selection", "models", "contextual_model", "layer", "view"}


class SceneError(ValueError):
    pass


def builtin_scenes() -> list[str]:
    return sorted(p.stem for p in BUILTIN.glob("*.json"))


def load_scene(name_or_path: str) -> dict[str, Any]:
    path = BUILTIN / f"{name_or_path}.json" if name_or_path in builtin_scenes() else Path(name_or_path)
    if not path.is_file():
        raise SceneError(f"no scene '{name_or_path}' (built-in: {', '.join(builtin_scenes())})")
    try:
        scene = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SceneError(f"{path} is not a scene file ({e})") from None
    if not isinstance(scene, dict) or not isinstance(scene.get("sentences"), list) or "panel" not in scene:
        raise SceneError(f"{path} is not a scene file (it needs 'panel' and a list of 'sentences')")
    unknown = sorted(set(scene) - FIELDS)
    if unknown:
        raise SceneError(f"{path}: unknown scene fields {', '.join(unknown)}")
    scene.setdefault("models", [])
    return scene


def save_scene(path: str | Path, scene: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps({k: v for k, v in scene.items() if k in FIELDS}, indent=2) + "\n", encoding="utf-8")
