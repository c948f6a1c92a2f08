"""`ulvm bench WHAT [--quick] [--dir DIR]... [--repeat N] [--out DIR]`: the driver."""

import argparse
import datetime
import os
import platform
import sys
import time

from . import experiments
from .core import Progress, Unavailable, Workspace, fmt_duration, is_memory_fs
from .report import table_markdown, write_results


class Context:
    def __init__(self, args):
        self.ulvm = os.path.realpath(args.ulvm)
        self.quick = args.quick
        self.repeat = args.repeat
        self.dirs = [os.path.realpath(d) for d in (args.dir or ["/var/tmp", "/dev/shm"])]
        for d in self.dirs:
            if not os.path.isdir(d):
                raise SystemExit("ulvm bench: --dir %s: not a directory" % d)
        self.mem_dirs = [d for d in self.dirs if is_memory_fs(d)]
        self.disk_dirs = [d for d in self.dirs if not is_memory_fs(d)]
        self.progress = Progress()
        self.bench_dir = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))

    def reps(self, full=3, quick=2):
        """Repetitions of each cell: --repeat, else the experiment's default."""
        return self.repeat or (quick if self.quick else full)

    def secs(self, full, quick):
        return quick if self.quick else full

    def disk_dir(self):
        if not self.disk_dirs:
            raise Unavailable("needs a --dir on a disk file system (not tmpfs)")
        return self.disk_dirs[0]

    def mem_dir(self):
        if not self.mem_dirs:
            raise Unavailable("needs a --dir on a memory file system (tmpfs, e.g. /dev/shm)")
        return self.mem_dirs[0]


def machine_line():
    ncpu = os.cpu_count()
    try:
        load = "load average %.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        load = "load unknown"
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = ", %.0f GiB RAM" % (kb / 2 ** 20)
    except (OSError, ValueError, IndexError):
        pass
    return "%s, %s CPUs%s, Linux %s; %s at start" % (platform.node(), ncpu, mem,
                                                       platform.release(), load)


def main(argv):
    ap = argparse.ArgumentParser(
        prog="ulvm bench",
        description="Every seed experiment, baseline and ulvm interleaved in one run; tables "
                    "as Markdown and JSON, one SVG plot per table (docs/BENCHMARKS.md).")
    ap.add_argument("--ulvm", required=True, help=argparse.SUPPRESS)
    ap.add_argument("what", choices=experiments.NAMES + ["all"])
    ap.add_argument("--quick", action="store_true", help="a smoke run, under two minutes")
    ap.add_argument("--dir", action="append",
                    help="where backing files go (repeatable; default /var/tmp and /dev/shm)")
    ap.add_argument("--repeat", type=int, default=0, help="repetitions of every cell")
    ap.add_argument("--out", default="ulvm-bench-results",
                    help="directory for results.md, results.json and the SVG plots")
    args = ap.parse_args(argv)
    if args.repeat < 0:
        ap.error("--repeat must be positive")
    ctx = Context(args)
    chosen = experiments.select(args.what)
    plan = [(e, e.estimate(ctx)) for e in chosen]
    total = sum(s for _, s in plan)
    print("ulvm bench %s%s: %d experiment%s, about %s (%s); results in %s" % (
        args.what, " --quick" if ctx.quick else "", len(plan), "" if len(plan) == 1 else "s",
        fmt_duration(total), ", ".join("%s %s" % (e.name, fmt_duration(s)) for e, s in plan),
        os.path.abspath(args.out)), flush=True)
    meta = {"command": "ulvm bench " + " ".join(argv[2:]) if argv[:1] == ["--ulvm"] else "",
            "started": datetime.datetime.now(datetime.timezone.utc).strftime(
                "%Y-%m-%d %H:%M UTC"),
            "machine": machine_line(), "quick": ctx.quick,
            "repeat": ctx.repeat or None,
            "dirs": ctx.dirs, "ulvm": ctx.ulvm, "driver": ctx.bench_dir}
    done = []
    failed = 0
    for i, (e, est) in enumerate(plan):
        ctx.progress.after = sum(s for _, s in plan[i + 1:])
        e.status, e.reason, e.seconds = "ok", None, 0.0
        tables = e.tables(ctx)
        ws = Workspace(ctx, e.name)
        t0 = time.time()
        try:
            e.run(ctx, ws, tables)
        except Unavailable as x:
            e.status, e.reason = "unavailable", str(x)
        except KeyboardInterrupt:
            ctx.progress.clear()
            ws.cleanup()
            raise
        except Exception as x:  # one experiment failing does not lose the others
            e.status, e.reason = "failed", "%s: %s" % (type(x).__name__, x)
            failed += 1
        finally:
            ctx.progress.clear()
            ws.cleanup()
        e.seconds = time.time() - t0
        for t in tables:
            if t.status == "pending":
                t.status = e.status
                t.reason = e.reason
        done.append((e, tables))
        write_results(args.out, meta, done)
        print("\n## %s: %s (%s)\n" % (e.name, e.title, fmt_duration(e.seconds)))
        if e.status != "ok":
            print("%s: %s\n" % ("NOT AVAILABLE" if e.status == "unavailable" else "FAILED",
                                e.reason))
        for t in tables:
            print(table_markdown(t))
        sys.stdout.flush()
    print("Results: %s/results.md, results.json and one SVG per table." % args.out)
    return 1 if failed else 0
