"""Entry point of the packaged app (PyInstaller runs this file)."""

import sys

from explorer.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
