import sys

from envpin.refresh.cli import main

sys.exit(main())
