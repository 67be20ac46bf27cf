"""`python -m tempera.daemon run`: what the hooks and `tempera daemon start` launch."""

import sys

from tempera.daemon.server import main

if __name__ == "__main__":
    if sys.argv[1:] not in (["run"], []):
        sys.stderr.write("usage: python -m tempera.daemon run\n")
        sys.exit(2)
    sys.exit(main())
