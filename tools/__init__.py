"""opbench's Python tools, installable as the package opbench_tools (tools/pyproject.toml). Each module
is also a script that runs from a checkout; they import each other as top-level modules from this folder."""
