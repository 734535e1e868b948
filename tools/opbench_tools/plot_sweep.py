"""A roofline-style view of a bench_ops sweep: per family, achieved GB/s against bytes moved per
iteration, one line per dtype x backend, with this run's measured ceilings (read, write, copy streams;
from its Ceiling cases) as lines over the sizes each ran at, the fastest stream of a kind and size.

  opbench-plot BENCH_OPS.json --out sweep.png [--families LayerNorm,Gemv]

Reads any bench_ops Google Benchmark JSON (--benchmark_out). Cases that failed or report no GB/s are
left out; a family with no plottable case is named on stderr. Exit 0, or 2 on unusable input.
"""
from __future__ import annotations

import argparse
import collections
import sys

from opbench_tools import cli
from opbench_tools.benchmark_json import InputError, check_entry, finite_number, is_failed, read_json, stream_curves

MAX_FAMILIES = 60   # panels in one figure


def plottable_cases(data: dict) -> dict:
    """{family: {(dtype, backend): [(bytes, GB/s), ...]}}, and the ceilings {kind: {bytes: GB/s}}."""
    families = collections.defaultdict(lambda: collections.defaultdict(list))
    streams = []   # (name, bytes, GB/s) of the Ceiling cases
    for entry in data.get("benchmarks", []):
        if entry.get("run_type", "iteration") != "iteration" or is_failed(entry):
            continue
        parts = entry["name"].split("/")
        nbytes, gbps = finite_number(entry.get("bytes")), finite_number(entry.get("GB/s"))
        if len(parts) < 4 or not (nbytes and nbytes > 0 and gbps and gbps > 0):
            continue
        family, dtype, backend = parts[0], parts[1], parts[-1]
        if family == "Ceiling":
            streams.append((entry["name"], nbytes, gbps))
            continue
        families[family][(dtype, backend)].append((nbytes, gbps))
    return families, stream_curves(streams)   # the fastest stream of a kind and size, as bench_ops takes it


def plot(families: dict, ceilings: dict, device: str, out: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted(families)
    cols = min(3, len(names))
    rows = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.8 * rows), squeeze=False)
    styles = {"read": ":", "write": "-.", "copy": "--"}
    for ax, name in zip(axes.flat, names):
        for (dtype, backend), points in sorted(families[name].items()):
            points.sort()
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=f"{dtype} {backend}")
        for kind, curve in sorted(ceilings.items()):   # each stream over the sizes it ran at
            sizes = sorted(curve)
            ax.plot(sizes, [curve[b] for b in sizes], color="gray", linestyle=styles[kind], linewidth=1)
            ax.annotate(f"{kind} {curve[sizes[-1]]:.0f}", (sizes[-1], curve[sizes[-1]]), fontsize=7, color="gray",
                        va="bottom", ha="right")
        ax.set_xscale("log", base=2)
        ax.set_title(name)
        ax.set_xlabel("bytes moved per iteration")
        ax.set_ylabel("GB/s")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    fig.suptitle(f"bench_ops on {device}: achieved bandwidth vs bytes moved (lines: measured ceilings)")
    fig.tight_layout()
    cli.save_figure(fig, out, dpi=110)
    plt.close(fig)


def main(argv: list | None = None) -> int:
    return cli.run("opbench-plot", _main, argv)


def _main(argv: list | None) -> int:
    parser = cli.Parser(prog="opbench-plot", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", help="bench_ops Google Benchmark JSON (--benchmark_out)")
    parser.add_argument("--out", required=True, help="PNG to write")
    parser.add_argument("--families", help="comma-separated families to plot (default: all)")
    args = parser.parse_args(argv)
    try:
        cli.check_figure_path("--out", args.out)
        cli.check_outputs({"JSON": args.json}, {"--out": args.out})
        data = read_json(args.json)
        for i, entry in enumerate(data["benchmarks"]):
            check_entry(args.json, i, entry)
    except InputError as e:
        print(f"opbench-plot: {e}", file=sys.stderr)
        return 2
    families, ceilings = plottable_cases(data)
    if args.families:
        wanted = set(args.families.split(","))
        for missing in sorted(wanted - set(families)):
            print(f"opbench-plot: {args.json}: no plottable case of family {missing}", file=sys.stderr)
        families = {k: v for k, v in families.items() if k in wanted}
    if not families:
        print(f"opbench-plot: {args.json}: no case with GB/s and bytes to plot", file=sys.stderr)
        return 2
    if len(families) > MAX_FAMILIES:
        print(f"opbench-plot: {args.json}: {len(families)} families; one figure shows at most {MAX_FAMILIES}: "
              "choose some with --families", file=sys.stderr)
        return 2
    context = data.get("context") if isinstance(data.get("context"), dict) else {}
    device = str(context.get("opbench_device", "unknown device"))
    plot(families, ceilings, device, args.out)
    print(f"opbench-plot: wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
