"""Metadata commands: bench/metadata.sh (`lvs` and `lvcreate` on a VG of 1,000 LVs, ulvm
against LVM2's own commands on the same VG through loop devices), run --repeat times; each
run's medians are one repetition here."""

import json
import os
import subprocess

from .core import Col, Experiment, Ratio, Table, Unavailable

CMDS = [("lvs", "lvs"), ("lvcreate", "lvcreate (and lvremove, untimed)")]


class Metadata(Experiment):
    name = "metadata"
    title = "Metadata commands on a VG of many LVs, ulvm vs LVM2"

    def params(self, ctx):
        return ctx.secs(1000, 40), ctx.secs(5, 3), ctx.reps(3, 1)

    def tables(self, ctx):
        nlv, runs, _ = self.params(ctx)
        cols = [Col("ulvm", "ulvm", "ms", "{:.2f}"), Col("lvm2", "LVM2", "ms", "{:.2f}"),
                Ratio("lvm2_ulvm", "LVM2/ulvm (speed-up)", "lvm2", "ulvm")]
        return [Table("metadata", "Metadata commands on a VG of %d LVs" % nlv, CMDS, cols,
                      "bench/metadata.sh --lvs %d --runs %d: wall time of the whole command, "
                      "ulvm on the image files and LVM2 (`--driverloaded n`) on loop devices "
                      "over them, alternating; lvcreate -an -Zn for both; both archive into a "
                      "system directory of the run's own (LVM_SYSTEM_DIR, the host's "
                      "lvm.conf); each repetition is one run of the script (the median of "
                      "its runs)." % (nlv, runs),
                      plot={"kind": "bars", "cols": ["ulvm", "lvm2"], "ylabel": "ms"})]

    def estimate(self, ctx):
        nlv, runs, reps = self.params(ctx)
        return reps * (nlv * 0.012 + runs * 0.2 + 1)

    def run(self, ctx, ws, tables):
        t = tables[0]
        nlv, runs, reps = self.params(ctx)
        script = os.path.join(ctx.bench_dir, "metadata.sh")
        ctx.progress.begin(self.name, reps, self.estimate(ctx))
        lvm2 = True
        for rep in range(reps):
            ctx.progress.step("bench/metadata.sh --lvs %d --runs %d (%d/%d)" % (
                nlv, runs, rep + 1, reps))
            out = os.path.join(ws.tmp, "metadata-%d.json" % rep)
            r = subprocess.run(["bash", script, "--ulvm", ctx.ulvm, "--lvs", str(nlv),
                                "--runs", str(runs), "--json", out], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            if r.returncode or not os.path.exists(out):
                raise RuntimeError("bench/metadata.sh failed: %s" % r.stdout.strip()[-400:])
            with open(out) as f:
                j = json.load(f)
            for k, _ in CMDS:
                t.add(k, "ulvm", j[k]["ulvm_us"] / 1000, rep)
                if "lvm2_us" in j[k]:
                    t.add(k, "lvm2", j[k]["lvm2_us"] / 1000, rep)
                else:
                    lvm2 = False
        if not lvm2:
            t.reason = "LVM2 side not measured (needs root, loop devices and lvm2)"
        t.status = "ok"
