import sys

from metrics.core import exit_quietly_on_closed_output

from .platform.commands.cli import main

sys.exit(exit_quietly_on_closed_output(main))
