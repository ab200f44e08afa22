import sys

from .platform.cli import main

sys.exit(main())
