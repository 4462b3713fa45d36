"""``python -m convscope``: the ``convscope`` command line."""

import sys

from .cli import main

sys.exit(main())
