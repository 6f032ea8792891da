"""``word2bert``: open the app. Qt is imported inside main() and torch only in worker threads,
so the window shows before the heavy imports finish."""

import sys


def main(argv: list[str] | None = None) -> int:
    if argv is None and sys.argv[1:2] not in (["--train-cli"], ["--finetune-cli"]):
        from explorer.python_allocator import restart_with_malloc

        restart_with_malloc()  # (the window's process: Python's objects from malloc, before anything is imported)
    argv = sys.argv if argv is None else argv
    if len(argv) > 1 and argv[1] == "--train-cli":  # the packaged app runs training processes as itself
        from engine.api import train_cli

        return train_cli(argv[2:])
    if len(argv) > 1 and argv[1] == "--finetune-cli":
        from engine.api import finetune_cli

        return finetune_cli(argv[2:])
    from explorer.worker_threads import sleeping_worker_threads

    sleeping_worker_threads()  # (before torch: the window's worker threads sleep between operations)
    from explorer.malloc_arenas import fewer_arenas

    fewer_arenas()  # (before any thread starts: two malloc arenas, whose freed memory the trims give back)
    from explorer.app import run

    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
