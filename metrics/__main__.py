import sys

from metrics.cli import main
from metrics.core._boundary import exit_quietly_on_closed_output

sys.exit(exit_quietly_on_closed_output(main))
