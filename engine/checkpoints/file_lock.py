"""Advisory locks that say "a live process is writing this file": a save's owner file and the temporary
files of atomic writes. A process id alone cannot say it: ids are reused (a dead save's leftovers named
for pid 123 would be kept for good once another process gets 123), and a process in a container sees
other ids. The operating system drops a lock when its holder dies, however it dies.

POSIX: ``flock`` on the file (advisory: the holder's own writes through other handles are unaffected).
Windows: ``msvcrt.locking`` on the first byte, which is mandatory there, so only files that nobody else
writes (a save's owner file) are locked on Windows, and a temporary file falls back to its process id.
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

LOCKS = fcntl is not None or os.name == "nt"


class HeldLock:
    """An exclusive lock on a file, held until ``release`` (or the process ends)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def release(self) -> None:
        if self.fd < 0:
            return
        try:
            if fcntl is not None:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            else:  # pragma: no cover - Windows
                import msvcrt

                os.lseek(self.fd, 0, os.SEEK_SET)
                msvcrt.locking(self.fd, msvcrt.LK_UNLCK, 1)
        except OSError:
            pass
        os.close(self.fd)
        self.fd = -1


def _try_lock(fd: int) -> bool:
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:  # pragma: no cover - Windows
            import msvcrt

            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except OSError:
        return False
    return True


def hold(path: Path, note: str = "") -> HeldLock:
    """Create (or open) ``path``, write ``note`` into it (for people: the writer's process id), and lock
    it. Raises OSError where the file cannot be made or is locked by someone else."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    if not _try_lock(fd):
        os.close(fd)
        raise OSError(f"{path} is locked by another writer")
    if note:
        os.ftruncate(fd, 0)
        os.write(fd, note.encode())
    return HeldLock(fd)


def held(path: Path) -> bool:
    """Whether a live process holds the lock on ``path`` (a missing or unreadable file: no). Another
    thread of this process holding it counts too (POSIX locks belong to the open file, not the process)."""
    try:
        fd = os.open(path, os.O_RDWR if os.name == "nt" else os.O_RDONLY)
    except OSError:
        return False
    try:
        if _try_lock(fd):
            HeldLock(fd).release()
            fd = -1
            return False
        return True
    finally:
        if fd >= 0:
            os.close(fd)
