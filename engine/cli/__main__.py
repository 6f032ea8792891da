"""``python -m engine.cli KIND ...`` (and ``torchrun -m engine.cli``): the same as ``word2bert-train``."""

import sys

from engine.cli.train import train_main

if __name__ == "__main__":
    sys.exit(train_main())
