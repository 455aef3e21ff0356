"""``python -m smtlab.study [--quick] [-o OUTDIR] [--workers N] [--only KEYS]``: see report.py."""

import sys

from .report import main

sys.exit(main())
