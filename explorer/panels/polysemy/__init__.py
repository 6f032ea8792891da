"""The polysemy lens: a word's occurrences across a corpus, per model and layer."""
