import sys

from .platform.commands.cli import main

sys.exit(main())
