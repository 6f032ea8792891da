import os
import random

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TOPICS = {
    "fruit": ["apple", "banana", "cherry", "mango", "peach", "grape", "lemon", "melon"],
    "vehicle": ["car", "truck", "bus", "train", "bicycle", "tram", "van", "taxi"],
    "music": ["guitar", "piano", "violin", "drum", "flute", "cello", "harp", "trumpet"],
}
FRAMES = {
    "fruit": ["i ate a ripe {} today", "the {} tastes sweet and fresh", "she peeled the {} for lunch",
              "a juicy {} from the market"],
    "vehicle": ["he drove the {} to town", "the {} stopped at the station", "we parked the {} outside",
                "the old {} needs new wheels"],
    "music": ["she played the {} on stage", "the {} sounded loud in the hall", "he tuned his {} before the concert",
              "a lesson on the {} every week"],
}


def make_topic_corpus(path, n_docs=300, seed=0):
    """Documents of sentences about one topic each: same-topic words share contexts."""
    rng = random.Random(seed)
    docs = []
    for _ in range(n_docs):
        topic = rng.choice(list(TOPICS))
        sentences = []
        for _ in range(rng.randint(3, 6)):
            frame = rng.choice(FRAMES[topic]).format(rng.choice(TOPICS[topic]))
            sentences.append(frame[0].upper() + frame[1:] + ".")
        docs.append(" ".join(sentences))
    path.write_text("\n\n".join(docs) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    os.environ["WORD2BERT_CACHE"] = str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="session")
def topic_corpus(tmp_path_factory):
    return make_topic_corpus(tmp_path_factory.mktemp("corpus") / "topics.txt")
