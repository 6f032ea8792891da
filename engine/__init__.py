"""word2bert engine: trains, loads, saves, evaluates and inspects NLP-pretraining models.

Never imports Qt. The explorer talks to it only through :mod:`engine.api`.
"""

__version__ = "0.1.0"
