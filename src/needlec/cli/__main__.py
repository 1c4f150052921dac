"""`python -m needlec.cli`: the same entry point as the `needlec` command."""

import sys

from needlec.cli import main

sys.exit(main())
