"""The `convscope` command line."""

from __future__ import annotations

import sys

from convcore import __version__

USAGE = f"""convscope {__version__}

usage: convscope serve [--host 127.0.0.1] [--port 8000]
"""


def main(argv: list[str] | None = None) -> int:
    print(USAGE, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
