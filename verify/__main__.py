"""``python -m verify`` is ``ptx-verify``."""
import sys

from .cli import main

sys.exit(main())
