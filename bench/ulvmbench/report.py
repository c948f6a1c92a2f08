"""Results of `ulvm bench` as Markdown, JSON and one SVG plot per table."""

import json
import math
import os
from xml.sax.saxutils import escape

PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#ff9da7"]


def cell_text(col, s):
    if s is None:
        return "–"
    m = s["median"]
    txt = col.fmt.format(m)
    if s["n"] > 1 and m:
        spread = (s["max"] - s["min"]) / 2 / abs(m) * 100
        txt += " ±%.0f%%" % spread if spread >= 1 else " ±%.1f%%" % spread
    return txt


def table_markdown(t, svg_name=None):
    out = ["### %s" % t.title, ""]
    if t.seed:
        out += ["*The seed:* %s" % t.seed, ""]
    out += ["*How:* %s" % t.how, ""]
    if t.status != "ok":
        out += ["**Not measured: %s**" % (t.reason or t.status), ""]
    head = ["" if not t.rows else "row"] + ["%s%s" % (c.label, "" if c.ratio else
                                                      " (%s)" % c.unit) for c in t.cols]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for rk, rl in t.rows:
        if rk in t.row_reason:
            out.append("| %s | %s |" % (rl, " | ".join(
                ["n/a: " + t.row_reason[rk]] + [""] * (len(t.cols) - 1))))
            continue
        cells = [cell_text(c, t.summary(rk, c.key)) if t.status == "ok" else "–"
                 for c in t.cols]
        out.append("| %s | %s |" % (rl, " | ".join(cells)))
    out.append("")
    if svg_name and t.status == "ok":
        out += ["![%s](%s)" % (t.title, svg_name), ""]
    return "\n".join(out)


def write_results(outdir, meta, experiments):
    """experiments: [(experiment, [tables])]. Writes results.json, results.md, TABLE.svg."""
    os.makedirs(outdir, exist_ok=True)
    doc = dict(meta)
    doc["experiments"] = []
    md = ["# ulvm bench results", "",
          "%s. %s" % (meta["started"], meta["machine"]), "",
          "Each cell: the median of its repetitions (%s; every one is in results.json), ± half "
          "the range (max − min) as a share of the median; ratios are taken per repetition "
          "(the two runs were next to each other) and summarised the same way. Command: "
          "`%s`." % ("--repeat %d" % meta["repeat"] if meta["repeat"] else
                     "each experiment's default, docs/BENCHMARKS.md", meta["command"]),
          ""]
    for exp, tables in experiments:
        e = {"name": exp.name, "title": exp.title, "status": exp.status, "reason": exp.reason,
             "seconds": round(exp.seconds, 1), "tables": []}
        md += ["## %s: %s" % (exp.name, exp.title), ""]
        if exp.status != "ok":
            md += ["**%s: %s**" % ("Not available" if exp.status == "unavailable"
                                   else exp.status.capitalize(), exp.reason), ""]
        for t in tables:
            svg = None
            if t.status == "ok" and t.plot:
                svg = "%s.svg" % t.id
                with open(os.path.join(outdir, svg), "w") as f:
                    f.write(table_svg(t))
            tj = t.to_json()
            tj["svg"] = svg
            e["tables"].append(tj)
            md.append(table_markdown(t, svg))
        doc["experiments"].append(e)
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    with open(os.path.join(outdir, "results.md"), "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(outdir, "summary.md"), "w") as f:
        f.write(summary_markdown(meta, experiments))


def summary_markdown(meta, experiments, prefix=""):
    """The ratios only, one small table per measured table, each with its plot: what the
    README shows. prefix: the plots' directory as seen from where the summary goes."""
    out = ["%s; %s." % (meta["started"], meta["machine"]), ""]
    for exp, tables in experiments:
        if exp.status != "ok":
            out += ["- **%s**: %s" % (exp.name, exp.reason), ""]
            continue
        for t in tables:
            ratios = [c for c in t.cols if c.ratio]
            if t.status != "ok" or not ratios:
                if t.status != "ok":
                    out += ["- **%s**: %s" % (t.title, t.reason), ""]
                continue
            out += ["**%s** ([plot](%s%s.svg))" % (t.title, prefix, t.id), ""]
            out.append("| | " + " | ".join(c.label for c in ratios) + " |")
            out.append("|---|" + "---|" * len(ratios))
            for rk, rl in t.rows:
                if rk in t.row_reason:
                    out.append("| %s | n/a: %s |%s" % (rl, t.row_reason[rk],
                                                       " |" * (len(ratios) - 1)))
                    continue
                cells = []
                for c in ratios:
                    sm = t.summary(rk, c.key)
                    cells.append("–" if sm is None else "%.2f" % sm["median"])
                out.append("| %s | %s |" % (rl, " | ".join(cells)))
            out.append("")
    return "\n".join(out)


def nice_ticks(lo, hi, n=5):
    span = hi - lo
    if span <= 0:
        span = abs(hi) or 1
    raw = span / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    t = math.floor(lo / step) * step
    ticks = []
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 12))
        t += step
    return ticks


def tick_label(v):
    a = abs(v)
    if a >= 1e6:
        return "%gM" % (v / 1e6)
    if a >= 1e4:
        return "%gk" % (v / 1e3)
    return "%g" % v


def table_svg(t):
    """Grouped bars (or lines) per row for the plotted columns, with the min..max range of
    the repetitions as error bars; a dashed reference line (1.0 for ratios)."""
    p = t.plot
    cols = [t.col(k) for k in p["cols"]]
    series = []
    for c in cols:
        pts = []
        for rk, _ in t.rows:
            s = t.summary(rk, c.key) if rk not in t.row_reason else None
            pts.append(s)
        series.append((c, pts))
    vals = [v for _, pts in series for s in pts if s for v in (s["min"], s["max"])]
    log = p.get("log", False) and vals and min(vals) > 0
    ref = p.get("ref")
    if ref is not None:
        vals.append(ref)
    if not vals:
        vals = [0, 1]
    if log:
        lo = 10 ** math.floor(math.log10(min(vals)))
        hi = 10 ** math.ceil(math.log10(max(vals)))
        if hi <= lo:
            hi = lo * 10
        ticks = [10 ** e for e in range(int(round(math.log10(lo))),
                                        int(round(math.log10(hi))) + 1)]
    else:
        lo = min(0.0, min(vals))
        hi = max(vals) * 1.08 if max(vals) > 0 else 1
        if p.get("zoom") and ref is not None:
            lo = min(vals) - (max(vals) - min(vals)) * 0.15
            lo = min(lo, ref * 0.95)
            hi = max(max(vals), ref) + (max(vals) - min(vals)) * 0.15
        ticks = [x for x in nice_ticks(lo, hi) if lo <= x <= hi]

    legend_rows = (len(series) + 2) // 3
    W, H = 760, 420 + 14 * legend_rows
    L, R, T, B = 90, 20, 36 + 14 * legend_rows, 100
    pw, ph = W - L - R, H - T - B

    def y(v):
        if log:
            v = max(v, lo)
            return T + ph - (math.log10(v) - math.log10(lo)) / (math.log10(hi) -
                                                                math.log10(lo)) * ph
        return T + ph - (v - lo) / (hi - lo) * ph

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">' % (W, H, W, H),
           '<rect width="%d" height="%d" fill="white"/>' % (W, H),
           '<text x="%d" y="20" font-size="14" text-anchor="middle">%s</text>' % (
               W // 2, escape(t.title))]
    for tv in ticks:
        yy = y(tv)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (
            L, yy, L + pw, yy))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (
            L - 5, yy + 4, escape(tick_label(tv))))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, T, L, T + ph))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (
        L, T + ph, L + pw, T + ph))
    out.append('<text transform="translate(16,%d) rotate(-90)" text-anchor="middle">%s%s'
               '</text>' % (T + ph // 2, escape(p.get("ylabel", "")),
                            " (log scale)" if log else ""))
    n = len(t.rows)
    gw = pw / max(n, 1)
    for i, (rk, rl) in enumerate(t.rows):
        cx = L + gw * (i + 0.5)
        short = rl.split(" (")[0]  # the plot's axis: the label without its details
        out.append('<text x="%.1f" y="%d" text-anchor="end" transform="rotate(-30 %.1f %d)">'
                   '%s</text>' % (cx, T + ph + 14, cx, T + ph + 14, escape(short)))
    if p.get("xlabel"):
        out.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' % (
            L + pw // 2, H - 8, escape(p["xlabel"])))
    kind = p.get("kind", "bars")
    ns = len(series)
    for si, (c, pts) in enumerate(series):
        color = PALETTE[si % len(PALETTE)]
        if kind == "lines":
            xy = [(L + gw * (i + 0.5), y(s["median"])) for i, s in enumerate(pts) if s]
            if len(xy) > 1:
                out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (
                    color, " ".join("%.1f,%.1f" % q for q in xy)))
            for i, s in enumerate(pts):
                if not s:
                    continue
                x = L + gw * (i + 0.5)
                out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>' % (
                    x, y(s["min"]), x, y(s["max"]), color))
                out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (
                    x, y(s["median"]), color))
        else:
            bw = gw * 0.8 / ns
            for i, s in enumerate(pts):
                if not s:
                    continue
                x0 = L + gw * i + gw * 0.1 + bw * si
                base = y(lo) if log else y(max(lo, 0))
                top = y(s["median"])
                out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s">'
                           '<title>%s: %s</title></rect>' % (
                               x0, min(top, base), bw, abs(base - top), color,
                               escape(c.label), escape(c.fmt.format(s["median"]))))
                xm = x0 + bw / 2
                out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>' % (
                    xm, y(s["min"]), xm, y(s["max"])))
        lx = L + (si % 3) * 220
        ly = 28 + (si // 3) * 14
        out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>' % (lx, ly, color))
        out.append('<text x="%d" y="%d">%s</text>' % (lx + 14, ly + 9, escape(c.label)))
    if ref is not None and lo <= ref <= hi:
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#333" '
                   'stroke-dasharray="4 3"/>' % (L, y(ref), L + pw, y(ref)))
    out.append("</svg>")
    return "\n".join(out) + "\n"
