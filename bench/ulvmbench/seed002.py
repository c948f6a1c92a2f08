"""Seed 002 (in Swedish): bonnie on ReiserFS on LVM 0.7, a linear LV on the faster disk against
an LV striped 16 KiB over that disk and a much slower one; the striped one was slower. Here:
two unequal devices (a file on /dev/shm and one on disk), linear LVs on each, and LVs striped
over both with stripe sizes 4 KiB..512 KiB; sequential 1 MiB and random 4 KiB reads and
writes, in bonnie's order (block output, block input, random), against linear on the fast
device."""

import os

from .core import (Col, Experiment, Ratio, Table, Unavailable, add_turns, alternate, fio_jobs,
                   need_tools, slices, wait_for)

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
                Table("seed002-overhead", "Linear and striped LVs against the raw file "
                      "beneath, library, CPU per GiB (seed 002)", self.overhead_rows(ctx),
                      self.overhead_cols(),
                      "`ulvm bench cell` with the workloads above on three targets over the "
                      "same kind of device: the PV file at a linear LV's offset "
                      "(`--raw-under`), that linear LV, and an LV striped 2 x 64 KiB over two "
                      "files of that device (each file the size of the raw one); the three in "
                      "one process taking turns of ~0.05 s, so that the machine's load falls on "
                      "all alike, the first alternating per repetition (ratios: the median of "
                      "the rounds'). Throughput, and user+system CPU time from getrusage per "
                      "GiB moved: a striped 1 MiB request goes down as one "
                      "vectored request per stripe.",
                      seed="the seed's striped LV was slower than the linear one; is it the "
                           "volume manager's doing?",
                      plot={"kind": "bars", "cols": ["lin_raw", "str_raw", "cpu_lin_raw",
                                                     "cpu_str_raw"],
                            "ylabel": "LV / raw", "ref": 1.0, "zoom": True}),
                Table("seed002-nbd", self.title + ", fio over NBD", self.rows(), self.cols(),
                      "fio --ioengine=nbd with the same --rw, --bs and --iodepth on the same "
                      "LVs, exported by `ulvm serve` on a Unix socket; per workload one fio run "
                      "with the ten LVs as jobs one after the other, their order alternating "
                      "per repetition. The NBD round trip (tens of microseconds) is in every "
                      "figure, as it is for any NBD client.",
                      seed=seed, plot=dict(plot))]

    def media(self, ctx):
        return ([("disk", ctx.disk_dirs[0])] if ctx.disk_dirs else []) + \
            ([("memory", ctx.mem_dirs[0])] if ctx.mem_dirs else [])

    def overhead_rows(self, ctx):
        return [("%s-%s" % (m, k), "%s (%s), %s" % (m, d, l)) for m, d in self.media(ctx)
                for k, l, _, _, _ in WORK]

    def overhead_cols(self):
        return [Col("raw", "raw", "MiB/s"), Col("lin", "linear", "MiB/s"),
                Col("str", "striped", "MiB/s"), Ratio("lin_raw", "linear/raw", "lin", "raw"),
                Ratio("str_raw", "striped/raw", "str", "raw"),
                Col("raw_cpu", "raw CPU", "s/GiB", "{:.4f}"),
                Col("lin_cpu", "linear CPU", "s/GiB", "{:.4f}"),
                Col("str_cpu", "striped CPU", "s/GiB", "{:.4f}"),
                Ratio("cpu_lin_raw", "CPU linear/raw", "lin_cpu", "raw_cpu",
                      higher_is_better=False),
                Ratio("cpu_str_raw", "CPU striped/raw", "str_cpu", "raw_cpu",
                      higher_is_better=False)]

    def overhead_secs(self, ctx):
        return ctx.secs(0.5, 0.1)

    def sizes(self, ctx):
        return ctx.secs(256 << 20, 32 << 20), ctx.secs(1.0, 0.1)

    def nbd_reps(self, ctx):
        return ctx.reps(3, 1)  # fio costs ~0.3 s a job whatever its runtime

    def estimate(self, ctx):
        size, secs = self.sizes(ctx)
        return len(self.rows()) * len(WORK) * ctx.reps(3, 2) * (secs + 0.04) + \
            len(self.rows()) * len(WORK) * self.nbd_reps(ctx) * (secs + 0.3) + \
            len(self.rows()) * size / (400 << 20) + 3 + \
            len(self.overhead_rows(ctx)) * 3 * ctx.reps(3, 2) * (self.overhead_secs(ctx) + 0.05) \
            + len(self.media(ctx)) * 3 * size / (400 << 20)

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
                           len(self.overhead_rows(ctx)) * ctx.reps(3, 2) +
                           len(WORK) * self.nbd_reps(ctx), self.estimate(ctx))
        for rep in range(reps):
            for key, label, _, args, field in WORK:
                for rk in alternate(rep, rows):
                    ctx.progress.step("%s %s, repetition %d" % (rk, label, rep + 1))
                    r = ws.cell("--lv", "bench2/" + rk, "--seconds", secs, *args)
                    t.add(rk, key, r[field], rep)
        t.status = "ok"
        self.overhead(ctx, ws, tables[1], size)
        try:
            self.nbd(ctx, ws, tables[2], rows, size, secs)
            tables[2].status = "ok"
        except Unavailable as e:
            tables[2].status, tables[2].reason = "unavailable", str(e)

    def overhead(self, ctx, ws, t, size):
        """raw, linear and striped 2 x 64k over two files of the same device."""
        secs = self.overhead_secs(ctx)
        for m, d in self.media(ctx):
            a = ws.image(d, "ov-a.img", size + size // 2 + (16 << 20))
            b = ws.image(d, "ov-b.img", size // 2 + (16 << 20))
            ws.ulvm("vgextend", "bench2", a, b)
            ws.ulvm("lvcreate", "-n", "ov-%s-lin" % m, "-L", "%db" % size, "bench2", a)
            ws.ulvm("lvcreate", "-n", "ov-%s-str" % m, "-i", "2", "-I", "64k", "-L",
                    "%db" % size, "bench2", a, b)
            for lv in ("lin", "str"):
                ctx.progress.show("[seed002] filling bench2/ov-%s-%s" % (m, lv))
                ws.cell("--lv", "bench2/ov-%s-%s" % (m, lv), "--rw", "write", "--bs", "1M",
                        "--qd", "4", "--once")
        targets = [("raw", "--raw-under", "lin"), ("lin", "--lv", "lin"),
                   ("str", "--lv", "str")]
        for rep in range(ctx.reps(3, 2)):
            for m, _ in self.media(ctx):
                for key, label, _, args, _ in WORK:
                    ctx.progress.step("LV vs raw, %s %s, repetition %d" % (m, label, rep + 1))
                    order = alternate(rep, targets)
                    res = ws.cells([(how, "bench2/ov-%s-%s" % (m, lv)) for _, how, lv in order],
                                   "--seconds", secs, "--slices", slices(secs), *args)
                    add_turns([t], "%s-%s" % (m, key), rep,
                              {col: r for (col, _, _), r in zip(order, res)})
        t.status = "ok"

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
