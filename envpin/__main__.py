import sys

from envpin.cli import main

sys.exit(main())
