"""``word2bert``: open the app. Qt is imported inside main() and torch only in worker threads,
so the window shows before the heavy imports finish."""

import sys


def main(argv: list[str] | None = None) -> int:
    from explorer.app import run

    return run(sys.argv if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
