"""Seed 002 (in Swedish): bonnie on ReiserFS on LVM 0.7, a linear LV on the faster disk against
an LV striped 16 KiB over that disk and a much slower one; the striped one was slower. Here:
two unequal devices (a file on /dev/shm and one on disk), linear LVs on each, and LVs striped
over both with stripe sizes 4 KiB..512 KiB; sequential 1 MiB and random 4 KiB reads and
writes, in bonnie's order (block output, block input, random), against linear on the fast
device."""

import os

from .core import (Col, Experiment, Ratio, Table, Unavailable, alternate, fio_jobs, need_tools,
                   wait_for)

STRIPES = ["4k", "8k", "16k", "32k", "64k", "128k", "256k", "512k"]
# (column, label, unit, cell arguments, result field)
WORK = [("seqwrite", "seq write 1M", "MiB/s", ["--rw", "write", "--bs", "1M", "--qd", "1"],
         "mib_s"),
        ("seqread", "seq read 1M", "MiB/s", ["--rw", "read", "--bs", "1M", "--qd", "1"],
         "mib_s"),
        ("randwrite", "rand write 4k qd16", "IOPS",
         ["--rw", "randwrite", "--bs", "4k", "--qd", "16"], "iops"),
        ("randread", "rand read 4k qd16", "IOPS",
         ["--rw", "randread", "--bs", "4k", "--qd", "16"], "iops")]


class Seed002(Experiment):
    name = "seed002"
    title = "Linear vs striped over two unequal devices, stripe sizes 4k..512k (seed 002)"

    def rows(self):
        return [("linear-fast", "linear, fast device"), ("linear-slow", "linear, slow device")] \
            + [("striped-" + s, "striped 2 x %s" % s) for s in STRIPES]

    def cols(self):
        return [Col(k, l, u) for k, l, u, _, _ in WORK] + \
            [Ratio(k + "_lin", l + " / linear fast", k, k, den_row="linear-fast")
             for k, l, _, _, _ in WORK]

    def tables(self, ctx):
        cols = self.cols()
        fast = ctx.mem_dirs[0] if ctx.mem_dirs else "?"
        slow = ctx.disk_dirs[0] if ctx.disk_dirs else "?"
        plot = {"kind": "bars", "cols": [k + "_lin" for k, _, _, _, _ in WORK],
                "ylabel": "LV / linear on the fast device", "ref": 1.0}
        seed = ("bonnie, 128 MB: linear 6336 K/s block output, 6970 K/s block input, 118.9 "
                "seeks/s; striped 16k over the two disks 3963, 2983 and 89.8.")
        return [Table("seed002", self.title + ", library", self.rows(), cols,
                      "`ulvm bench cell` through the library (the same engine and requests "
                      "fio would issue: --rw, --bs, --iodepth): the fast device is a file in "
                      "%s, the slow one a file in %s (O_DIRECT); each striped LV has one "
                      "stripe on each; all LVs are written in full first; the rows alternate "
                      "per repetition." % (fast, slow),
                      seed=seed, plot=plot),
                Table("seed002-nbd", self.title + ", fio over NBD", self.rows(), self.cols(),
                      "fio --ioengine=nbd with the same --rw, --bs and --iodepth on the same "
                      "LVs, exported by `ulvm serve` on a Unix socket; per workload one fio run "
                      "with the ten LVs as jobs one after the other, their order alternating "
                      "per repetition. The NBD round trip (tens of microseconds) is in every "
                      "figure, as it is for any NBD client.",
                      seed=seed, plot=dict(plot))]

    def sizes(self, ctx):
        return ctx.secs(256 << 20, 32 << 20), ctx.secs(1.0, 0.1)

    def nbd_reps(self, ctx):
        return ctx.reps(3, 1)  # fio costs ~0.3 s a job whatever its runtime

    def estimate(self, ctx):
        size, secs = self.sizes(ctx)
        return len(self.rows()) * len(WORK) * ctx.reps(3, 2) * (secs + 0.04) + \
            len(self.rows()) * len(WORK) * self.nbd_reps(ctx) * (secs + 0.3) + \
            len(self.rows()) * size / (400 << 20) + 3

    def run(self, ctx, ws, tables):
        t = tables[0]
        size, secs = self.sizes(ctx)
        reps = ctx.reps(3, 2)
        per_pv = size + len(STRIPES) * size // 2 + (16 << 20)
        fast = ws.image(ctx.mem_dir(), "fast.img", per_pv)
        slow = ws.image(ctx.disk_dir(), "slow.img", per_pv)
        ws.ulvm("vgcreate", "bench2", fast, slow)
        ws.ulvm("lvcreate", "-n", "linear-fast", "-L", "%db" % size, "bench2", fast)
        ws.ulvm("lvcreate", "-n", "linear-slow", "-L", "%db" % size, "bench2", slow)
        for s in STRIPES:
            ws.ulvm("lvcreate", "-n", "striped-" + s, "-i", "2", "-I", s, "-L", "%db" % size,
                    "bench2", fast, slow)
        rows = [rk for rk, _ in t.rows]
        for rk in rows:
            ctx.progress.show("[seed002] filling bench2/%s" % rk)
            ws.cell("--lv", "bench2/" + rk, "--rw", "write", "--bs", "1M", "--qd", "4", "--once")
        ctx.progress.begin(self.name, len(rows) * len(WORK) * reps +
                           len(WORK) * self.nbd_reps(ctx), self.estimate(ctx))
        for rep in range(reps):
            for key, label, _, args, field in WORK:
                for rk in alternate(rep, rows):
                    ctx.progress.step("%s %s, repetition %d" % (rk, label, rep + 1))
                    r = ws.cell("--lv", "bench2/" + rk, "--seconds", secs, *args)
                    t.add(rk, key, r[field], rep)
        t.status = "ok"
        try:
            self.nbd(ctx, ws, tables[1], rows, size, secs)
            tables[1].status = "ok"
        except Unavailable as e:
            tables[1].status, tables[1].reason = "unavailable", str(e)

    def nbd(self, ctx, ws, t, rows, size, secs):
        need_tools("fio")
        sock = os.path.join(ws.env["ULVM_RUN_DIR"], "nbd.sock")
        ws.ulvm("vgchange", "-ay", "bench2")
        serve = ws.spawn([ctx.ulvm, "serve", "--foreground"], "ulvmd.log")
        wait_for(lambda: os.path.exists(sock), what=sock)
        ms = "%dms" % max(1, int(secs * 1000))
        reps = self.nbd_reps(ctx)
        for rep in range(reps):
            for key, label, _, args, field in WORK:
                ctx.progress.step("NBD, %s, repetition %d" % (label, rep + 1))
                rw, bs, qd = args[1], args[3], args[5]
                jobs = [(rk, ["--uri=nbd+unix:///bench2/%s?socket=%s" % (rk, sock)])
                        for rk in alternate(rep, rows)]
                res = fio_jobs(["--ioengine=nbd", "--size=%d" % size, "--rw=" + rw,
                                "--bs=" + bs, "--iodepth=" + qd, "--time_based",
                                "--runtime=" + ms], jobs)
                for rk in rows:
                    d = res[rk][1 if rw.endswith("write") else 0]
                    t.add(rk, key, d["bw_bytes"] / (1 << 20) if field == "mib_s"
                          else d["iops"], rep)
        serve.stop()
