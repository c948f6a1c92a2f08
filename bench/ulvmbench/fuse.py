"""The FUSE export against the plain file: bench/fuse.sh (fio, libaio, O_DIRECT, on an LV's
file under `ulvm mount` and on a plain file of the same size on the same file system, through
the file itself, a loop device over it, and ext4 on that loop device), run --repeat times;
each run of the script is one repetition (the two targets alternate within it). Besides the
rates, CPU seconds per GiB: fio's for the plain file, fio's and ulvmd's for the FUSE file (on a
loaded machine the figure that does not count waiting for a CPU). The same again on a second
mount without worker threads (`-o workers=0`, a second LV), in turn with the other two, so the
table shows what the workers bring (workers / workers=0)."""

import os
import subprocess

from .core import Col, Experiment, Ratio, Table, need_root, need_tools

STACKS = [("file", "file"), ("loop", "loop"), ("ext4", "ext4 on loop")]
WORK = [("seq-read 1", "seq read 1M qd1"), ("seq-write 1", "seq write 1M qd1"),
        ("rand-read 1", "rand read 4k qd1"), ("rand-read 32", "rand read 4k qd32"),
        ("rand-write 1", "rand write 4k qd1"), ("rand-write 32", "rand write 4k qd32")]


def rows():
    return [("%s/%s" % (s, w.replace(" ", "-qd")), "%s: %s" % (sl, wl))
            for s, sl in STACKS for w, wl in WORK]


class Fuse(Experiment):
    name = "fuse"
    title = "FUSE export: an LV's file against a plain file, through file, loop and ext4"

    def params(self, ctx):
        stacks = ["file"] if ctx.quick else [s for s, _ in STACKS]
        return ctx.secs("1", "250ms"), ctx.secs(1.0, 0.25), ctx.reps(3, 1), \
            ctx.secs(512, 64), stacks

    def tables(self, ctx):
        cols = [Col("plain", "plain file", "MB/s or IOPS"),
                Col("fuse", "FUSE LV file", "MB/s or IOPS"),
                Ratio("ratio", "FUSE / plain", "fuse", "plain"),
                Col("fuse0", "FUSE workers=0", "MB/s or IOPS"),
                Ratio("ratio0", "workers=0 / plain", "fuse0", "plain"),
                Ratio("wratio", "workers / workers=0", "fuse", "fuse0"),
                Col("plain_cpu", "plain: CPU s/GiB (fio)", "s/GiB", "{:.2f}"),
                Col("fuse_cpu", "FUSE: CPU s/GiB (fio + ulvmd)", "s/GiB", "{:.2f}"),
                Col("fuse0_cpu", "workers=0: CPU s/GiB", "s/GiB", "{:.2f}"),
                Ratio("cpu_ratio", "CPU plain / FUSE", "plain_cpu", "fuse_cpu")]
        return [Table("fuse", self.title, rows(), cols,
                      "bench/fuse.sh --runtime %s --size %d MiB in %s: fio --direct=1 "
                      "--ioengine=libaio (1 s ramp); 1M rows in MB/s, 4k rows in IOPS%s." % (
                          self.params(ctx)[0], self.params(ctx)[3], ctx.dirs[0],
                          "; --quick runs the file stack only" if ctx.quick else ""),
                      plot={"kind": "bars", "cols": ["ratio"], "ylabel": "FUSE / plain file",
                            "ref": 1.0})]

    def estimate(self, ctx):
        _, secs, reps, size, stacks = self.params(ctx)
        # fio: a 1 s ramp and ~0.5 s of its own per job; each stack's setup (mkfs, layout)
        return reps * (len(stacks) * (len(WORK) * 3 * (secs + 1.6) + size / 70) + 3)

    def run(self, ctx, ws, tables):
        t = tables[0]
        arg, _, reps, size, stacks = self.params(ctx)
        need_root("loop devices and mounts")
        need_tools("fio", "losetup", "mkfs.ext4", "fusermount3")
        if not os.path.exists("/dev/fuse"):
            need_tools("/dev/fuse")
        base = ctx.disk_dirs[0] if ctx.disk_dirs else ctx.dirs[0]
        for s, _ in STACKS:
            if s not in stacks:
                for w, _ in WORK:
                    t.row_unavailable("%s/%s" % (s, w.replace(" ", "-qd")),
                                      "not run with --quick")
        script = os.path.join(ctx.bench_dir, "fuse.sh")
        ctx.progress.begin(self.name, reps, self.estimate(ctx))
        for rep in range(reps):
            ctx.progress.step("bench/fuse.sh --stacks %s (%d/%d)" % (",".join(stacks), rep + 1,
                                                                     reps))
            r = subprocess.run(["bash", script, "--ulvm", ctx.ulvm, "--size", str(size),
                                "--runtime", arg, "--repeat", "1", "--dir", base,
                                "--stacks", ",".join(stacks)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=ws.env)
            if r.returncode:
                raise RuntimeError("bench/fuse.sh: exit %d: %s" % (r.returncode,
                                                                   r.stdout.strip()[-400:]))
            stack = None
            for line in r.stdout.splitlines():
                w = line.split()
                if not w:
                    continue
                if line[0] != " " and w[0].rstrip(":") in ("file", "loop", "ext4"):
                    stack = w[0].rstrip(":")
                elif stack and len(w) == 11 and w[0] != "workload":
                    # workload qd unit plain fuse ratio fuse0 ratio0 cpu-plain cpu-fuse cpu-fuse0
                    rk = "%s/%s-qd%s" % (stack, w[0], w[1])
                    if rk in dict(rows()):
                        t.add(rk, "plain", float(w[3]), rep)
                        t.add(rk, "fuse", float(w[4]), rep)
                        t.add(rk, "fuse0", float(w[6]), rep)
                        if float(w[9]) > 0:
                            t.add(rk, "plain_cpu", float(w[8]), rep)
                            t.add(rk, "fuse_cpu", float(w[9]), rep)
                            t.add(rk, "fuse0_cpu", float(w[10]), rep)
        t.status = "ok"
