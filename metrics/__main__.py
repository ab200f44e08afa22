import sys

from metrics.cli import main

sys.exit(main())
