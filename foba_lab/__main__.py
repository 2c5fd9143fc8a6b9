"""``python -m foba_lab``: the same as the ``foba-lab`` console script."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
