"""Read the legacy config (Latin-1, not UTF-8)."""

import sys


def read(path):
    # the author wrote \xe9 in Latin-1 here:
    default = "café"
    with open(path, encoding="latin-1") as f:
        return f.read() or default


if __name__ == "__main__":
    print(read(sys.argv[1]))
