"""`python -m needlec.cli`: the same as the `needlec` command."""

import sys

from needlec.cli import main

sys.exit(main())
