"""The ``toolc`` console script: the CLI if the compiler's dependencies are installed, else
one line saying how to install them.

``pip install toolc`` is the runtime alone (numpy and msgpack); the command needs the compiler
(``pip install 'toolc[compile]'``: click, interegular, tokenizers, jsonschema). This module
imports only the standard library until it has checked that they are there.
"""

from __future__ import annotations

import importlib.util
import sys

#: the import names of the ``compile`` extra's packages
COMPILE_MODULES = ("click", "interegular", "tokenizers", "jsonschema")


def missing_compile_modules() -> list[str]:
    """The modules of the ``compile`` extra that cannot be imported here."""
    return [name for name in COMPILE_MODULES if importlib.util.find_spec(name) is None]


def main() -> None:
    missing = missing_compile_modules()
    if missing:
        print(f"toolc: the command needs the compiler's dependencies (missing: "
              f"{', '.join(missing)}); install them with: pip install 'toolc[compile]'",
              file=sys.stderr)
        sys.exit(1)
    from .cli import main as cli_main
    cli_main()


if __name__ == "__main__":
    main()
