"""Runs one bench_ops sweep over every GPU of this host: one process per GPU (CUDA_VISIBLE_DEVICES),
each on its share of the selected cases, and merges what they write into the files one process writes.

  opbench-shard [--shards N] [--gpus 0,1,...] [--bench-ops build/bench_ops] [--times PREV.json] \\
      -- [bench_ops flags: --benchmark_filter, --output FILE.csv, --benchmark_out FILE.json, ...]

Each shard runs `bench_ops --opbench_shard=I/N` (bench_ops cuts the selection: balanced by expected
time, or by PREV.json's times; every experiment's cases in one shard so its row is complete; the
Ceiling cases in each shard, on its own GPU). On a machine without a GPU, --shards N runs N CPU
processes. What comes out:
  --output FILE.csv   every shard appends its rows (and FILE.json's dashboard records) to the same
                      files under bench_ops' lock as each experiment completes, all with one run id,
                      each row naming its device (device_id): a failed shard loses no other's rows
  --benchmark_out F   one Google Benchmark JSON: every shard's entries, each tagged opbench_shard and
                      opbench_device_id, in the order one process runs them (Ceiling entries once per
                      shard); the context says the shards, their devices and any that failed
Console: each shard's lines as they come, prefixed [shard I cuda:I]; a closing line per shard (its case runs
and the seconds they took), then the run's wall time.
Exit: 0 every shard ok; 1 a shard had failed cases; 2 unusable input (here or a shard's bench_ops);
3 a shard died (a signal, or an exit code bench_ops does not use): the others' results are kept.
"""
import argparse
import json
import os
import pathlib
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from opbench_tools import cli
from opbench_tools.build_dir import MissingBinary, binary
from opbench_tools.gpus import chosen_gpus, visible_gpus

REFUSED = {  # bench_ops flags a sharded run cannot honour, and why
    "--opbench_shard": "opbench-shard gives each shard its --opbench_shard",
    "--opbench_run_id": "opbench-shard gives the shards one run id",
    "--opbench_markdown": "each shard would write its own; make the table from the merged rows",
    "--oplog": "an operator replay runs in one process",
}


STOP_GRACE_S = 60   # after SIGINT/SIGTERM, how long a shard may take to write what it finished


class Usage(Exception):
    """Unusable input: one line, exit 2."""


def flag_name(arg):
    return arg.split("=", 1)[0]


def split_args(args):
    """(bench_ops args without --benchmark_out*, the --benchmark_out path or None)."""
    kept, out, fmt = [], None, "json"
    for arg in args:
        name = flag_name(arg)
        if name in REFUSED:
            raise Usage(f"{name} cannot be given to a sharded run: {REFUSED[name]}")
        if name == "--benchmark_out":
            if "=" not in arg:
                raise Usage("--benchmark_out needs =FILE (Google Benchmark takes --benchmark_out=FILE)")
            out = arg.split("=", 1)[1]
        elif name == "--benchmark_out_format":
            fmt = arg.split("=", 1)[1] if "=" in arg else ""
        else:
            kept.append(arg)
    if fmt != "json":
        raise Usage(f"--benchmark_out_format={fmt}: the merged file is JSON; leave it out or say json")
    return kept, out


def plan_devices(shards, gpus):
    """[(device label, CUDA_VISIBLE_DEVICES or None)] per shard."""
    if gpus:
        count = shards or len(gpus)
        if count > len(gpus):
            raise Usage(f"--shards {count}: this host shows {len(gpus)} GPU(s) ({','.join(gpus)}); one shard per GPU")
        return [(f"cuda:{g}", g) for g in gpus[:count]]
    if not shards:
        raise Usage("no GPU found (nvidia-smi, CUDA_VISIBLE_DEVICES): give --shards N to run N CPU processes")
    return [("cpu", None)] * shards


def case_order(bench_ops, args):
    """The selected cases in the order one bench_ops runs them (its --benchmark_list_tests)."""
    listing = subprocess.run([bench_ops, *args, "--benchmark_list_tests"], capture_output=True, text=True,
                             timeout=600)
    if listing.returncode != 0:
        sys.stderr.write(listing.stderr)
        raise Usage(f"{bench_ops} refused these flags (exit {listing.returncode}; its message is above)")
    return {name: i for i, name in enumerate(line.strip() for line in listing.stdout.splitlines() if line.strip())}


def forward(stream, sink, prefix, lock):
    for line in iter(stream.readline, ""):
        with lock:
            sink.write(prefix + line)
            sink.flush()
    stream.close()


def start_shard(i, cuda, count, bench_ops, args, run_id, work, times):
    """Starts shard i in a session of its own: (process, json path)."""
    env = dict(os.environ, OPBENCH_SHARD=str(i))
    if cuda is not None:   # nvidia-smi's numbering is the PCI order; make CUDA's the same
        env["CUDA_VISIBLE_DEVICES"] = cuda
        env.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    out = work / f"shard{i}.json"
    cmd = [bench_ops, *args, f"--opbench_shard={i}/{count}", f"--opbench_run_id={run_id}",
           f"--benchmark_out={out}", "--benchmark_out_format=json"]
    if times:
        cmd.append(f"--opbench_shard_times={times}")
    # Its own session: a Ctrl-C reaches opbench-shard alone, which passes it on once (stop_shards).
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
                            start_new_session=True)
    return proc, out


def forward_output(proc, prefix, lock):
    """Threads that copy the shard's stdout and stderr line by line, each line prefixed."""
    threads = []
    for stream, sink in ((proc.stdout, sys.stdout), (proc.stderr, sys.stderr)):
        t = threading.Thread(target=forward, args=(stream, sink, prefix, lock), daemon=True)
        t.start()
        threads.append(t)
    return threads


def run_shards(bench_ops, args, devices, run_id, work, times):
    """Starts every shard, forwards its output line by line, waits; ([(returncode, json path)], the signal
    that stopped the run or None). A SIGINT or SIGTERM from the first shard's start on stops the shards
    started so far (stop_shards): what they finished is merged, whenever the signal comes."""
    lock = threading.Lock()
    procs, threads, stopped_by = [], [], None
    previous = signal.signal(signal.SIGTERM, cli.on_sigterm)
    try:
        for i, (label, cuda) in enumerate(devices):
            procs.append(start_shard(i, cuda, len(devices), bench_ops, args, run_id, work, times))
            threads += forward_output(procs[-1][0], f"[shard {i} {label}] ", lock)
        for proc, _ in procs:
            proc.wait()
    except KeyboardInterrupt:
        stopped_by = signal.SIGINT
    except cli.Terminated:
        stopped_by = signal.SIGTERM
    finally:
        signal.signal(signal.SIGTERM, previous)
    if stopped_by is not None:
        stop_shards([proc for proc, _ in procs], stopped_by)
    for t in threads:
        t.join()
    return [(proc.returncode, out) for proc, out in procs], stopped_by


def stop_shards(procs, stopped_by):
    """Passes `stopped_by` on to the shards still running (each writes what it finished and exits); kills
    any still running after STOP_GRACE_S. Further signals are ignored, so a second Ctrl-C cannot cut the
    merge short."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print(f"opbench-shard: {signal.Signals(stopped_by).name}: stopping the shards, then merging what they finished",
          file=sys.stderr)
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(stopped_by)
    for proc in procs:
        try:
            proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def read_shard_json(path):
    """(document, complete): a shard killed mid-run leaves its JSON unfinished: the context and every
    entry written in full are kept."""
    if not path.exists():
        return None, False
    text = path.read_text(errors="replace")
    try:
        return json.loads(text), True
    except json.JSONDecodeError:
        pass
    decoder = json.JSONDecoder()
    doc = {"context": {}, "benchmarks": []}
    at = text.find('"context"')
    if at >= 0:
        try:
            doc["context"] = decoder.raw_decode(text, text.index("{", at))[0]
        except (ValueError, json.JSONDecodeError):
            pass
    at = text.find('"benchmarks"')
    pos = text.find("[", at) + 1 if at >= 0 else -1
    while pos > 0:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        try:
            entry, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
        doc["benchmarks"].append(entry)
    return doc, False


def merge(results, devices, order, run_id):
    """One Google Benchmark document from the shards' JSON files."""
    context, entries, notes = None, [], []
    for i, (code, path) in enumerate(results):
        doc, complete = read_shard_json(path)
        if doc is None:
            continue
        if not complete:
            notes.append(f"shard {i}: its JSON was unfinished; {len(doc['benchmarks'])} complete entries kept")
        ctx = doc.get("context") or {}
        device = ctx.get("opbench_device_id", devices[i][0])
        if context is None or (not context and ctx):
            context = dict(ctx)
        for k, entry in enumerate(doc.get("benchmarks", [])):
            entry = dict(entry, opbench_shard=str(i), opbench_device_id=device)
            name = entry.get("run_name") or entry.get("name", "")
            entries.append(((order.get(name, len(order)), i, k), entry))
    context = context or {}
    context.pop("opbench_shard", None)
    context["opbench_shards"] = str(len(devices))
    context["opbench_shard_devices"] = " ".join(f"{i}={label}" for i, (label, _) in enumerate(devices))
    context["opbench_run_id"] = run_id
    failed = [str(i) for i, (code, _) in enumerate(results) if code != 0]
    if failed:
        context["opbench_failed_shards"] = " ".join(failed)
    entries.sort(key=lambda pair: pair[0])
    return {"context": context, "benchmarks": [e for _, e in entries]}, notes


def describe(code):
    if code == 0:
        return "ok"
    if code < 0:
        return f"FAILED: killed by signal {-code}"
    if code == 1:
        return "FAILED: some cases failed (exit 1)"
    if code == 2:
        return "FAILED: unusable input (exit 2)"
    return f"FAILED: exit {code}"


def exit_code(codes):
    if any(c < 0 or c not in (0, 1, 2) for c in codes):
        return 3
    if 2 in codes:
        return 2
    return 1 if 1 in codes else 0


def rows_of_run(csv_path, run_id):
    import csv
    try:
        with open(csv_path, newline="") as f:
            reader = csv.DictReader(f)
            return sum(1 for row in reader if row.get("run_id") == run_id)
    except OSError:
        return 0


def output_path(args):
    for i, arg in enumerate(args):
        if arg.startswith("--output="):
            return arg.split("=", 1)[1]
        if arg == "--output" and i + 1 < len(args):
            return args[i + 1]
    return None


def main(argv: list | None = None) -> int:
    return cli.run("opbench-shard", _main, argv)


def _main(argv: list | None) -> int:
    parser = cli.Parser(prog="opbench-shard", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shards", type=int, help="processes (default: one per visible GPU)")
    parser.add_argument("--gpus", help="comma-separated GPU indices or UUIDs to use (default: all visible)")
    parser.add_argument("--bench-ops", help="the bench_ops binary (default: bench_ops in the build folder: "
                        "$OPBENCH_BUILD_DIR, else build/ of the package's checkout or of the checkout you are in, "
                        "else ./build)")
    parser.add_argument("--times", help="a previous run's --benchmark_out JSON: balance on its times")
    parser.add_argument("--keep-dir", help="keep each shard's own JSON in this folder")
    parser.add_argument("bench_ops_args", nargs=argparse.REMAINDER, help="-- then bench_ops' flags")
    opts = parser.parse_args(argv)
    args = opts.bench_ops_args[1:] if opts.bench_ops_args[:1] == ["--"] else opts.bench_ops_args
    try:
        if opts.shards is not None and not 1 <= opts.shards <= 4096:
            raise Usage(f"--shards {opts.shards}: expected 1 to 4096")
        if int(os.environ.get("WORLD_SIZE", "1") or "1") > 1:
            raise Usage("WORLD_SIZE > 1: this is a distributed launch; each torchrun rank is one bench_ops (README "
                        "'Several GPUs'), not an opbench-shard")
        if opts.bench_ops is None:
            opts.bench_ops = str(binary("bench_ops"))
        elif not (os.path.isfile(opts.bench_ops) and os.access(opts.bench_ops, os.X_OK)):
            raise Usage(f"{opts.bench_ops}: no such program (build it: scripts/build.sh; or --bench-ops PATH)")
        if opts.times and not os.path.isfile(opts.times):
            raise Usage(f"--times {opts.times}: no such file")
        args, merged_path = split_args(args)
        rows = output_path(args)
        rows_files = {os.path.abspath(rows), os.path.splitext(os.path.abspath(rows))[0] + ".json"} if rows else set()
        if merged_path and os.path.abspath(merged_path) in rows_files:
            raise Usage(f"--benchmark_out={merged_path} is also a file --output {rows} writes (its dashboard "
                        "records); choose another")
        try:
            gpus = chosen_gpus(opts.gpus, visible_gpus(), "; --shards N runs N CPU processes")
        except ValueError as e:
            raise Usage(str(e)) from None
        devices = plan_devices(opts.shards, gpus)
        order = case_order(opts.bench_ops, args)
    except (Usage, MissingBinary, ValueError) as e:
        print(f"opbench-shard: {e}", file=sys.stderr)
        return 2
    run_id = secrets.token_hex(6)
    work = pathlib.Path(opts.keep_dir or tempfile.mkdtemp(prefix="opbench_shards_"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"opbench-shard: {len(devices)} shards on {', '.join(label for label, _ in devices)}, {len(order)} cases "
          f"selected, run id {run_id}", file=sys.stderr)
    started = time.monotonic()
    try:
        results, stopped_by = run_shards(opts.bench_ops, args, devices, run_id, work, opts.times)
        doc, notes = merge(results, devices, order, run_id)
        if stopped_by is not None:
            doc["context"]["opbench_interrupted"] = signal.Signals(stopped_by).name
        if merged_path:
            pathlib.Path(merged_path).parent.mkdir(parents=True, exist_ok=True)
            cli.write_atomically(merged_path, json.dumps(doc, indent=2) + "\n")
    finally:
        if not opts.keep_dir:
            shutil.rmtree(work, ignore_errors=True)
    for note in notes:
        print(f"opbench-shard: {note}", file=sys.stderr)
    runs, case_s = {}, {}   # per shard: case runs, and the seconds they took (bench_ops' case_wall_s)
    for entry in doc["benchmarks"]:
        if entry.get("run_type", "iteration") == "iteration":
            shard = entry["opbench_shard"]
            runs[shard] = runs.get(shard, 0) + 1
            case_s[shard] = case_s.get(shard, 0.0) + float(entry.get("case_wall_s", 0.0) or 0.0)
    for i, (code, _) in enumerate(results):
        print(f"opbench-shard: shard {i} ({devices[i][0]}): {describe(code)}; {runs.get(str(i), 0)} case run(s) "
              f"in its JSON, {case_s.get(str(i), 0.0):.1f} s of cases", file=sys.stderr)
    print(f"opbench-shard: {time.monotonic() - started:.1f} s from the first shard's start to the last one's end",
          file=sys.stderr)
    if rows:
        print(f"opbench-shard: {rows_of_run(rows, run_id)} experiment row(s) of run {run_id} in {rows}",
              file=sys.stderr)
    if merged_path:
        print(f"opbench-shard: merged Google Benchmark JSON in {merged_path}", file=sys.stderr)
    if stopped_by is not None:
        print(f"opbench-shard: interrupted by {signal.Signals(stopped_by).name}: the merged results hold what the "
              "shards finished", file=sys.stderr)
        return 128 + stopped_by
    code = exit_code([c for c, _ in results])
    if code:
        print(f"opbench-shard: failed shard(s): {', '.join(str(i) for i, (c, _) in enumerate(results) if c != 0)}; "
              "every other shard's rows and results are kept", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
