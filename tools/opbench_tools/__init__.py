"""opbench's Python tools (tools/pyproject.toml): one module per console script (compare, gate,
gate_selftest, trace_util, instr_counts, make_targets, plot_sweep, shard) and the modules they share.
Each command also runs as `python -m opbench_tools.<module>`."""
