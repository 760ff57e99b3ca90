"""Entry point of tessel's NKI tracer: python3 -B nki_trace.py KERNEL.py ... (see tessel_nki/cli.py)."""
import sys

sys.dont_write_bytecode = True

from tessel_nki.cli import main  # noqa: E402  (the package sits next to this script)

if __name__ == "__main__":
    sys.exit(main())
