"""The NBD export against its peers: bench/nbd.sh (the same fio jobs, ioengine=nbd, against
ulvm's export of a linear LV, nbdkit's file plugin, qemu-nbd raw and nbdkit's memory plugin as
the ceiling of protocol plus client, on one backing file in /dev/shm), run --repeat times;
each run of the script is one repetition (its servers take turns within it)."""

import os
import re
import subprocess

from .core import Col, Experiment, Ratio, Table, need_tools

JOBS = [("read 1M qd1", "seq read 1M qd1"), ("write 1M qd1", "seq write 1M qd1"),
        ("randread 4k qd1", "rand read 4k qd1"), ("randread 4k qd32", "rand read 4k qd32"),
        ("randwrite 4k qd1", "rand write 4k qd1"), ("randwrite 4k qd32", "rand write 4k qd32")]
SERVERS = [("ulvm", "ulvm"), ("nbdkit-file", "nbdkit file"), ("qemu-nbd", "qemu-nbd raw"),
           ("nbdkit-memory", "nbdkit memory")]


def parse_table(text, first_words):
    """A table printed by one of the bench scripts: a header line starting with `workload`,
    then rows whose first word is in first_words; returns (header words, {row: [words]})."""
    head, rows = None, {}
    for line in text.splitlines():
        w = line.split()
        if not w:
            continue
        if w[0] == "workload":
            head = w[1:]
        elif head and w[0] in first_words:
            rows[" ".join(w[:3])] = w[3:]
    return head, rows


class Nbd(Experiment):
    name = "nbd"
    title = "NBD export: ulvm against nbdkit, qemu-nbd and the protocol's ceiling"

    def params(self, ctx):
        return ctx.secs("3", "200ms"), ctx.secs(3.0, 0.2), ctx.reps(3, 1), \
            ctx.secs("1G", "256M")

    def tables(self, ctx):
        cols = [Col(k, l, "IOPS") for k, l in SERVERS] + \
            [Col("best", "faster of nbdkit file and qemu-nbd", "IOPS"),
             Ratio("ulvm_best", "ulvm / faster peer", "ulvm", "best"),
             Ratio("ulvm_ceiling", "ulvm / nbdkit memory", "ulvm", "nbdkit-memory")]
        return [Table("nbd", self.title, JOBS, cols,
                      "bench/nbd.sh --seconds %s --size %s: fio --ioengine=nbd on Unix sockets, "
                      "one backing file in /dev/shm, servers taking turns per job; 1M rows: "
                      "IOPS = MiB/s." % self.params(ctx)[0:4:3],
                      plot={"kind": "bars", "cols": ["ulvm_best", "ulvm_ceiling"],
                            "ylabel": "ulvm / peer", "ref": 1.0})]

    def estimate(self, ctx):
        _, secs, reps, _ = self.params(ctx)
        return reps * (len(JOBS) * len(SERVERS) * (secs + 0.3) + 3)

    def run(self, ctx, ws, tables):
        need_tools("fio", "nbdkit", "qemu-nbd")
        t = tables[0]
        arg, _, reps, size = self.params(ctx)
        script = os.path.join(ctx.bench_dir, "nbd.sh")
        ctx.progress.begin(self.name, reps, self.estimate(ctx))
        for rep in range(reps):
            ctx.progress.step("bench/nbd.sh --seconds %s (%d/%d)" % (arg, rep + 1, reps))
            r = subprocess.run(["bash", script, "--ulvm", ctx.ulvm, "--seconds", arg,
                                "--repeat", "1", "--size", size], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env=ws.env)
            head, rows = parse_table(r.stdout, {"read", "write", "randread", "randwrite"})
            if r.returncode or not head:
                raise RuntimeError("bench/nbd.sh: exit %d: %s" % (r.returncode,
                                                                  r.stdout.strip()[-400:]))
            for jk, _ in JOBS:
                vals = rows.get(jk)
                if not vals:
                    continue
                got = {}
                for (k, _), v in zip([(h, None) for h in head], vals):
                    if re.fullmatch(r"[0-9.]+", v) and k in dict(SERVERS):
                        got[k] = float(v)
                for k, v in got.items():
                    if v > 0:  # 0: that server's fio run failed
                        t.add(jk, k, v, rep)
                peers = [got.get("nbdkit-file", 0), got.get("qemu-nbd", 0)]
                if max(peers) > 0:
                    t.add(jk, "best", max(peers), rep)
        t.status = "ok"
