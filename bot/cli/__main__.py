"""``python -m bot.cli``: the command line without its console script, as before the package."""

import sys

from bot.cli import main

sys.exit(main())
