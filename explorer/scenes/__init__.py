"""Scenes: a panel's state in a small JSON file (sentences, selected word, models, layer, view), so a
demo is one click away. The built-in ones live here; users save their own anywhere."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BUILTIN = Path(__file__).resolve().parent
FIELDS = {"panel", "title", "sentences", "selection", "models", "contextual_model", "layer", "view", "curves", "run",
          "step", "lab", "lens", "measure", "show", "subject", "contrast", "target", "foil", "compare", "count", "debiased", "by_words",
          "continuation", "head", "mean_over", "effect"}
PANELS = ("polysemy", "neighbours", "attention", "predictions", "curves", "history", "layers")
# the views a scene may name, per panel (the panels show them in this order)
VIEWS = {"polysemy": ("neighbours", "map", "models", "static"), "attention": ("head", "model", "atlas", "rollout"),
         "predictions": ("masked", "next", "probability", "nsp")}
# the lab under the Masked LM and Next token views: its tabs, its measures (engine.api.LENS_MEASURES), A/B
LABS = ("grid", "trace", "attribution", "heads")
LENS_KINDS = ("logit", "tuned", "both")  # the logit lens, a loaded tuned lens, or both (the tuned rows below)
MEASURES = ("probability", "entropy", "kl", "rank")
SHOWS = ("A", "B", "A − B")
COUNTS = (20, 2000)  # the layer similarity's held-out sentences, at least and at most
CONTINUATIONS = ("greedy",)  # the Next token view's continuation a scene shows (greedy: the same every time)
MEAN_OVER = ("text", "corpus", "contrast")  # what the lab's heads page knocks a head out to (engine.api.head_ablation's
# mean_over; "contrast": its output on the scene's contrast sentence)
EFFECTS = ("knockout", "direct")  # what the heads page measures: knock-outs, or direct effects on the logits


class SceneError(ValueError):
    pass


@dataclass
class Scene:
    """A panel's state: its sentences, the word selected, the models it needs and the one it shows, the
    layer, the view; a talk step's one-line title; the fine-tuning curves it draws. Read from and written
    to the same JSON as ever (``check_scene``, ``to_json``)."""

    panel: str
    sentences: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    title: str | None = None
    selection: str | None = None
    contextual_model: str | None = None
    layer: int | None = None  # a hidden state (0: the input); an attention scene's: the block, from 0 (shown + 1)
    view: str | None = None
    curves: str | list[str] | None = None
    run: str | None = None  # the Run history's run folder (a scene of the "history" panel)
    step: int | None = None  # the checkpoint it shows: the kept one nearest this step (None: the last)
    lab: str | None = None  # the Masked LM / Next token view's lab open on its "grid", "trace", "attribution" or "heads"
    lens: str | None = None  # the grid's lens (LENS_KINDS)
    measure: str | None = None  # what colours the lens grid (MEASURES)
    show: str | None = None  # the grid of model A, of the compared B, or A − B (SHOWS)
    subject: str | None = None  # the words causal tracing noises
    contrast: str | None = None  # or the sentence it runs instead, one state of the text's put back at a time
    target: str | None = None  # the word attribution (or the heads' knock-outs) explains (None: the prediction)
    foil: str | None = None  # ... against this word
    by_words: bool | None = None  # ... its tokens added up word by word (None: by tokens)
    head: list[int] | None = None  # the heads page's head shown token by token: [layer from 0, head] (None: the strongest)
    mean_over: str | None = None  # what the heads page knocks a head out to: its mean over the "text" or the "corpus"
    effect: str | None = None  # what the heads page shows: "knockout" (None) or "direct" (into the logits)
    compare: str | None = None  # the model compared with (B)
    count: int | None = None  # the layer similarity's held-out sentences (None: the panel's default)
    debiased: bool | None = None  # the layer similarity's debiased CKA (None: the panel's default, plain CKA)
    continuation: str | None = None  # the Next token view's continuation shown with its next tokens (CONTINUATIONS)

    def to_json(self) -> dict[str, Any]:
        """The scene's JSON: its panel, sentences and models, and every other field that is set."""
        return {k: v for k, v in dataclasses.asdict(self).items()
                if v is not None or k in ("panel", "sentences", "models")}


def builtin_scenes() -> list[str]:
    return sorted(p.stem for p in BUILTIN.glob("*.json"))


def load_scene(name_or_path: str) -> Scene:
    path = BUILTIN / f"{name_or_path}.json" if name_or_path in builtin_scenes() else Path(name_or_path)
    if not path.is_file():
        import difflib

        close = difflib.get_close_matches(name_or_path, builtin_scenes(), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise SceneError(f"no scene '{name_or_path}'{hint} (built-in: {', '.join(builtin_scenes())})")
    try:
        scene = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SceneError(f"{path} is not a scene file ({e})") from None
    return check_scene(scene, str(path))


def check_scene(scene: Any, origin: str) -> Scene:
    """A scene read from JSON (a file, or a step of a talk deck), checked: its fields, sentences as text
    (lone surrogates, which JSON allows, replaced), and its models as a list of names."""
    if isinstance(scene, Scene):
        scene = scene.to_json()
    if isinstance(scene, dict) and scene.get("panel") in ("curves", "history", "layers"):
        scene.setdefault("sentences", [])  # curves, a run's history and the layer similarity need no sentences
    if not isinstance(scene, dict) or not isinstance(scene.get("sentences"), list) or "panel" not in scene:
        raise SceneError(f"{origin} is not a scene (it needs 'panel' and a list of 'sentences')")
    unknown = sorted(set(scene) - FIELDS)
    if unknown:
        raise SceneError(f"{origin}: unknown scene fields {', '.join(unknown)}")
    if scene["panel"] not in PANELS:
        raise SceneError(f"{origin}: unknown panel {scene['panel']!r} (one of {', '.join(PANELS)})")
    if not all(isinstance(s, str) for s in scene["sentences"]):
        raise SceneError(f"{origin}: every sentence must be text")
    models = scene.setdefault("models", [])
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise SceneError(f"{origin}: 'models' must be a list of model names")
    scene["sentences"] = [clean_text(s) for s in scene["sentences"]]
    for key in ("contextual_model", "compare"):  # one of its models by its path: the name it will be loaded as
        if isinstance(scene.get(key), str) and scene[key] in models:
            scene[key] = model_name(scene[key])
    for key in ("title", "selection", "contextual_model", "view", "run", "lab", "lens", "measure", "show", "subject",
                "contrast", "target", "foil", "compare", "continuation", "mean_over", "effect"):
        if scene.get(key) is not None and not isinstance(scene[key], str):
            raise SceneError(f"{origin}: '{key}' must be text")
    curves = scene.get("curves")
    if curves is not None and not isinstance(curves, str) and not (
            isinstance(curves, list) and all(isinstance(c, str) for c in curves)):
        raise SceneError(f"{origin}: 'curves' must name a curves file or list fine-tuning run folders")
    for key in ("layer", "step", "count"):
        if scene.get(key) is not None and (isinstance(scene[key], bool) or not isinstance(scene[key], int)):
            raise SceneError(f"{origin}: '{key}' must be a whole number or null")
    if scene.get("count") is not None and not COUNTS[0] <= scene["count"] <= COUNTS[1]:
        raise SceneError(f"{origin}: 'count' is how many held-out sentences the layer similarity reads: "
                         f"{COUNTS[0]} to {COUNTS[1]}")
    for key in ("debiased", "by_words"):
        if scene.get(key) is not None and not isinstance(scene[key], bool):
            raise SceneError(f"{origin}: '{key}' must be true, false or null")
    if scene["panel"] == "history" and not scene.get("run"):
        raise SceneError(f"{origin}: a scene of the Run history needs 'run', the run folder it opens")
    for key, allowed in (("lab", LABS), ("lens", LENS_KINDS), ("measure", MEASURES), ("show", SHOWS),
                         ("continuation", CONTINUATIONS)):
        if scene.get(key) is not None and scene[key] not in allowed:
            raise SceneError(f"{origin}: '{key}' {scene[key]!r} is not one of {', '.join(allowed)}")
    if scene.get("lab") and (scene["panel"] != "predictions" or scene.get("view") not in ("masked", "next")):
        raise SceneError(f"{origin}: 'lab' opens under the predictions panel's masked or next view")
    if scene.get("by_words") is not None and scene.get("lab") != "attribution":
        raise SceneError(f"{origin}: 'by_words' adds up the lab's attribution word by word: it needs \"lab\": "
                         f"\"attribution\"")
    head = scene.get("head")
    if head is not None and (not isinstance(head, list) or len(head) != 2 or any(
            isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in head)):
        raise SceneError(f"{origin}: 'head' is the heads page's head shown token by token: [layer from 0, head], "
                         "two whole numbers, or null")
    if head is not None and scene.get("lab") != "heads":
        raise SceneError(f"{origin}: 'head' is shown token by token under the lab's heads table: it needs \"lab\": "
                         "\"heads\"")
    if scene.get("mean_over") is not None and (scene["mean_over"] not in MEAN_OVER or scene.get("lab") != "heads"):
        raise SceneError(f"{origin}: 'mean_over' is what the lab's heads page knocks a head out to, "
                         f"{' or '.join(MEAN_OVER)}: it needs \"lab\": \"heads\"")
    if scene.get("effect") is not None and (scene["effect"] not in EFFECTS or scene.get("lab") != "heads"):
        raise SceneError(f"{origin}: 'effect' is what the lab's heads page shows, {' or '.join(EFFECTS)}: it needs "
                         "\"lab\": \"heads\"")
    if scene.get("mean_over") == "contrast" and not (scene.get("contrast") or "").strip():
        raise SceneError(f"{origin}: 'mean_over': 'contrast' patches each head from the scene's 'contrast' sentence: "
                         "it needs one")
    if scene.get("continuation") and (scene["panel"] != "predictions" or scene.get("view") != "next"):
        raise SceneError(f"{origin}: 'continuation' is shown under the predictions panel's next view")
    views = VIEWS.get(scene["panel"], ())
    if scene.get("view") and views and scene["view"] not in views:
        raise SceneError(f"{origin}: 'view' {scene['view']!r} is not a view of the {scene['panel']} panel "
                         f"(one of {', '.join(views)})")
    return Scene(**scene)


def model_name(key: str) -> str:
    """The name the app gives a model a scene lists: a built-in or shipped model's as given, a folder or file by
    its own name (a Hugging Face folder called "model" by its parent's), as the engine names what it loads. A
    scene made by hand may name its contextual model by the path it lists; the views choose by name."""
    if "/" not in key and "\\" not in key and not key.startswith("~"):
        return key
    from engine.api import loaded_name

    return loaded_name(key)


def check_answerable(scene: Scene, origin: str) -> None:
    """What a scene given on the command line (``--scene``, ``--talk``) asks that a fresh app cannot do:
    a model that does not exist, a contextual model it does not load, a polysemy word that is not in its
    sentences. Said before any window, naming the field, rather than waited for in vain. (A scene made in
    the app names the models loaded there, which a check of names alone cannot know.)"""
    from engine.api import model_names

    named = model_names()
    for name in scene.models:
        if name not in named and not Path(name).expanduser().exists():
            raise SceneError(f"{origin}: 'models' names {name!r}, which is neither a model of the app "
                             f"({', '.join(named)}) nor a folder or file here")
    if scene.run and not Path(scene.run).expanduser().is_dir():
        raise SceneError(f"{origin}: 'run' {scene.run!r} is not a folder here")
    if scene.compare and scene.compare not in scene.models + [Path(m).name for m in scene.models]:
        raise SceneError(f"{origin}: 'compare' {scene.compare!r} is not one of its 'models' ({', '.join(scene.models)})")
    chosen = scene.contextual_model
    if chosen and scene.models and chosen not in scene.models + [Path(m).name for m in scene.models]:
        raise SceneError(f"{origin}: 'contextual_model' {chosen!r} is not one of its 'models' "
                         f"({', '.join(scene.models)})")
    word = (scene.selection or "").strip().lower()
    if scene.panel == "polysemy" and word:
        from engine.api import word_spans

        words = {text[a:b].lower() for text in scene.sentences for a, b in word_spans(text)}
        if word not in words:
            raise SceneError(f"{origin}: 'selection' {scene.selection!r} is not a word of its sentences")


def clean_text(text: str) -> str:
    """Text Qt and the tokenizers can take: lone surrogates (valid in JSON, not in UTF-8) become U+FFFD."""
    return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


def save_scene(path: str | Path, scene: Scene) -> None:
    Path(path).write_text(json.dumps(scene.to_json(), indent=2) + "\n", encoding="utf-8")
