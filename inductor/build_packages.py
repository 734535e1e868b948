#!/usr/bin/env python3
"""Builds the AOTInductor packages that bench_ops' `inductor` backend loads.

bench_ops says which packages the selected cases need and whether each is current, missing or stale (its
key -- torch version, device, case, inductor settings, the module's source -- no longer matches): the
plan. This script builds every package of the plan that is not current, each in its own process (a
crash loses one package, not the run), `--jobs` at a time, with a progress line and the time each took,
and leaves the current ones alone. A failed package leaves no file behind; bench_ops then skips its case.
On a host with several GPUs of the plan's model, each build runs on a GPU of its own (CUDA_VISIBLE_DEVICES
per build): coordinate-descent tuning times kernels on the GPU, so two builds on one GPU skew each
other's choices, while builds on separate GPUs do not. The default --jobs is that GPU count (1 CPU build
per two cores on the CPU); the decode models, the longest builds, start first. Builders sharing a cache
(two shards, two users) take a lock per package (`<package>.lock`): a package another builder is making
is waited for and counted as built by it, never built twice at once.

  build_packages.py --bench-ops build/bench_ops [--filter REGEX] [--jobs N] [--force] [-- BENCH_OPS_ARGS]
  build_packages.py --plan PLAN.json [--jobs N] [--force]

Each package is `torch.export.export` of the module its family spells in Python (benchmarks/<family>/
<family>.py: case(dtype, dims, device) -> (module, inputs)), compiled by
`torch._inductor.aoti_compile_and_package` with the settings file's inductor options (gpt-fast's by
default: inductor/settings.json), parameters left out of the package (bench_ops loads its own tensors
under their names), and the key in the package's metadata. Exit status: 0 when every package of the plan
is current at the end, 1 when one failed to build, 2 on unusable input.
"""
import argparse
import fcntl
import json
import os
import subprocess
import sys
import time

STATE_CURRENT = "current"
DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp64": "float64", "int8": "int8"}


def fnv1a64(data: bytes) -> str:
    """The hash bench_ops keys settings and module sources with (FNV-1a, 64 bits, 16 hex digits)."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def unusable(message):
    """Unusable input: one line on stderr, exit status 2."""
    print(f"build_packages.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_plan(args):
    """The plan: from --plan, or from `bench_ops --opbench_inductor_plan=-` with the selection flags."""
    if args.plan:
        try:
            with (sys.stdin if args.plan == "-" else open(args.plan, encoding="utf-8")) as f:
                return json.load(f)
        except (OSError, ValueError) as e:
            unusable(f"--plan {args.plan}: {e}")
    cmd = [args.bench_ops, "--opbench_inductor_plan=-"]
    if args.filter:
        cmd.append(f"--benchmark_filter={args.filter}")
    cmd += args.bench_ops_args
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        unusable(f"--bench-ops {args.bench_ops}: {e}")
    if proc.returncode != 0:
        unusable(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def check_plan(plan):
    """One line and exit 2 when the plan cannot be built from here (wrong torch, wrong device, bad file)."""
    for field in ("torch", "device", "settings", "packages"):
        if field not in plan:
            unusable(f"the plan has no '{field}': not a bench_ops inductor plan")
    import torch
    here = torch.__version__.split("+")[0]
    if here != plan["torch"]:
        unusable(f"this python's torch is {torch.__version__}, bench_ops' LibTorch is "
                 f"{plan['torch']}: packages must be built by the same torch")
    if plan["device_type"] == "cuda":
        if not torch.cuda.is_available():
            unusable("the plan is for a CUDA device and this python sees none")
        if torch.cuda.get_device_name() != plan["device"]:
            unusable(f"the plan is for {plan['device']}, this python sees "
                     f"{torch.cuda.get_device_name()}")
    with open(plan["settings"]["path"], "rb") as f:
        if fnv1a64(f.read()) != plan["settings"]["hash"]:
            unusable(f"{plan['settings']['path']} changed since bench_ops read it: plan again")


def build_one(entry, settings_path, device_type):
    """In a child process: export and compile one package to a temporary name, then rename it in place."""
    import importlib.util

    import torch
    spec = importlib.util.spec_from_file_location("opbench_family_module", entry["module"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    dtype = getattr(torch, DTYPES[entry["dtype"]])
    with open(settings_path, encoding="utf-8") as f:
        configs = json.load(f)
    # Parameters and buffers stay out of the package, each a constant bench_ops loads by name (its own
    # tensors); none may be inlined into the code (inductor inlines 1-D tensors of <= 8 elements, e.g.
    # a router's per-expert scales), or the package would compute with this script's random values.
    configs["aot_inductor.package_constants_in_so"] = False
    configs["always_keep_tensor_constants"] = True
    configs["aot_inductor.metadata"] = dict(entry["key"])
    with torch.no_grad():
        mod, inputs = module.case(dtype, entry["dims"], device_type)
        program = torch.export.export(mod.eval(), tuple(inputs))
        partial = entry["package"] + ".partial.pt2"
        torch._inductor.aoti_compile_and_package(program, package_path=partial, inductor_configs=configs)
    os.replace(partial, entry["package"])


class Progress:
    """One line per finished package; on a terminal, a bar redrawn in place while packages build."""

    def __init__(self, total):
        self.total, self.done, self.tty = total, 0, sys.stderr.isatty()

    def running(self, names):
        if self.tty and self.total:
            filled = int(30 * self.done / self.total)
            line = f"[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} building: {', '.join(names)}"
            sys.stderr.write("\r" + line[:150].ljust(150))
            sys.stderr.flush()

    def finished(self, case, seconds, ok):
        self.done += 1
        if self.tty:
            sys.stderr.write("\r" + " " * 150 + "\r")
        state = "built" if ok else "FAILED"
        print(f"[{self.done}/{self.total}] {case}: {state} in {seconds:.1f} s", file=sys.stderr, flush=True)


def gpus_of_model(visible_ids, names, model):
    """The CUDA_VISIBLE_DEVICES values of the visible GPUs named `model`: visible_ids[i] is what selects
    the i-th GPU this process sees, names[i] its name."""
    return [gpu for gpu, name in zip(visible_ids, names) if name == model]


def build_gpus(plan):
    """The GPUs builds may run on (CUDA_VISIBLE_DEVICES values); [] for a CPU plan."""
    if plan["device_type"] != "cuda":
        return []
    import torch
    count = torch.cuda.device_count()
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [v.strip() for v in visible.split(",")][:count] if visible else [str(i) for i in range(count)]
    return gpus_of_model(ids, [torch.cuda.get_device_name(i) for i in range(count)], plan["device"])


def longest_first(todo):
    """The decode models' packages (minutes each) first, so the last build to finish is a short one."""
    return sorted(todo, key=lambda e: not e["module"].endswith(os.path.join("decode", "model.py")))


def lock_package(entry):
    """The package's lock (an open descriptor), or None while another builder holds it."""
    fd = os.open(entry["package"] + ".lock", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except BlockingIOError:
        os.close(fd)
        return None


def file_state(path):
    """What identifies a file's content without reading it: (mtime in ns, size, inode), or None when it
    is absent. Compared with itself, never with a clock: a file's mtime comes from the kernel's coarse
    clock, which can read a few ms behind time.time() taken before the write."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def next_lockable(waiting, before, reported):
    """Pops the first waiting entry whose lock this builder gets: (entry, fd, built_by_another), where
    built_by_another says its package was written since this builder started (`before`: each package's
    file_state then) while another builder held the lock; (None, None, False) when every waiting package
    is locked by another builder. `reported`: the cases already said to be waited for."""
    for i, entry in enumerate(waiting):
        os.makedirs(os.path.dirname(entry["package"]), exist_ok=True)
        fd = lock_package(entry)
        if fd is None:
            if entry["case"] not in reported:
                reported.add(entry["case"])
                print(f"{entry['case']}: another builder is making it: waiting", file=sys.stderr, flush=True)
            continue
        del waiting[i]
        now = file_state(entry["package"])
        return entry, fd, now is not None and now != before[entry["package"]]
    return None, None, False


def start_build(entry, plan, gpus, running):
    """Launches the child that builds `entry`, on the least busy of `gpus`; returns (process, log, gpu)."""
    log = open(entry["package"] + ".log", "w", encoding="utf-8")
    cmd = [sys.executable, os.path.abspath(__file__), "--one", json.dumps(entry),
           "--settings", plan["settings"]["path"], "--device-type", plan["device_type"]]
    env, gpu = dict(os.environ), None
    if gpus:
        busy = [r[4] for r in running.values()]
        gpu = min(gpus, key=busy.count)
        env["CUDA_VISIBLE_DEVICES"] = gpu
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env), log, gpu


def build_all(todo, plan, jobs, gpus):
    """Builds `todo` (plan entries) `jobs` at a time, each on the least busy of `gpus` (none: as this
    process sees the devices); returns {case: (seconds, ok)}."""
    progress, waiting, running, results = Progress(len(todo)), longest_first(todo), {}, {}
    before, reported = {e["package"]: file_state(e["package"]) for e in waiting}, set()
    while waiting or running:
        while waiting and len(running) < jobs:
            entry, fd, built_by_another = next_lockable(waiting, before, reported)
            if entry is None:
                break
            if built_by_another:
                os.close(fd)
                results[entry["case"]] = (0.0, True)
                progress.finished(entry["case"] + " (built by another builder)", 0.0, True)
                continue
            proc, log, gpu = start_build(entry, plan, gpus, running)
            running[entry["case"]] = (proc, time.time(), entry, log, gpu, fd)
        progress.running(list(running))
        time.sleep(0.2)
        for case, (proc, start, entry, log, gpu, fd) in list(running.items()):
            if proc.poll() is None:
                continue
            log.close()
            seconds, ok = time.time() - start, proc.returncode == 0
            results[case] = (seconds, ok)
            del running[case]
            if ok:
                write_sidecar(entry, seconds, plan, gpu)
            else:
                report_failure(entry)
            os.close(fd)
            progress.finished(case + ("" if gpu is None else f" (GPU {gpu})"), seconds, ok)
    return results


def write_sidecar(entry, seconds, plan, gpu):
    """Beside the package: how long it took to build (bench_ops reports it as compile_s) and with what."""
    import torch
    record = dict(case=entry["case"], compile_s=round(seconds, 2), torch=torch.__version__, gpu=gpu,
                  built=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), settings=plan["settings"]["path"])
    with open(entry["package"][:-len(".pt2")] + ".build.json", "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)


def report_failure(entry):
    partial = entry["package"] + ".partial.pt2"
    if os.path.exists(partial):
        os.remove(partial)
    with open(entry["package"] + ".log", encoding="utf-8", errors="replace") as f:
        tail = f.read().strip().splitlines()[-15:]
    print(f"build_packages.py: {entry['case']} failed (log: {entry['package']}.log):", file=sys.stderr)
    for line in tail:
        print(f"    {line}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    source = ap.add_mutually_exclusive_group()
    source.add_argument("--bench-ops", help="the bench_ops binary that plans (default: build/bench_ops)")
    source.add_argument("--plan", help="a plan bench_ops wrote (--opbench_inductor_plan); - for stdin")
    ap.add_argument("--filter", help="the cases, as --benchmark_filter (default: every inductor case)")
    ap.add_argument("--jobs", type=int,
                    help="packages built at once (default: one per GPU of the plan's model, each build on its own "
                         "GPU, since coordinate-descent tuning times kernels there; half the CPUs for the CPU)")
    ap.add_argument("--force", action="store_true", help="build current packages again too")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--settings", help=argparse.SUPPRESS)
    ap.add_argument("--device-type", help=argparse.SUPPRESS)
    ap.add_argument("bench_ops_args", nargs="*", help="after --: more bench_ops flags (e.g. --opbench_inductor_cache)")
    args = ap.parse_args()
    if args.one:
        build_one(json.loads(args.one), args.settings, args.device_type)
        return 0
    if args.jobs is not None and args.jobs < 1:
        ap.error("--jobs must be at least 1")
    if not args.plan and not args.bench_ops:
        args.bench_ops = "build/bench_ops"
    plan = read_plan(args)
    check_plan(plan)
    todo = [e for e in plan["packages"] if args.force or e["state"] != STATE_CURRENT]
    for entry in plan["packages"]:
        if entry not in todo:
            print(f"{entry['case']}: current ({entry['package']})", file=sys.stderr)
        elif entry["state"] != STATE_CURRENT:
            print(f"{entry['case']}: {entry['state']}: building", file=sys.stderr)
    start = time.time()
    gpus = build_gpus(plan)
    jobs = args.jobs or (len(gpus) if gpus else max(1, (os.cpu_count() or 2) // 2))
    if todo and len(gpus) > 1:
        print(f"build_packages.py: {min(jobs, len(todo))} at a time on GPUs {','.join(gpus)}", file=sys.stderr)
    results = build_all(todo, plan, jobs, gpus)
    failed = [case for case, (_, ok) in results.items() if not ok]
    print(f"build_packages.py: {len(results) - len(failed)} built, {len(failed)} failed, "
          f"{len(plan['packages']) - len(todo)} already current, {time.time() - start:.1f} s", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
