"""`python -m napisim._worker`: runs one scenario request (JSON on stdin) in this fresh process and
writes the tagged answer on stdout. Used by executors with long-lived workers (Dask), see sweep.py."""

import sys

from napisim.sweep import _worker_main

if __name__ == "__main__":
    sys.exit(_worker_main())
