"""``python -m engine.cli KIND ...`` (and ``torchrun -m engine.cli``): the same as ``word2bert-train``."""

from engine.cli.train import main

if __name__ == "__main__":
    main()
