#!/usr/bin/env python3
"""Summarise elastodyn Bench JSON files (DESIGN.md format) as Markdown tables, and plot them.

usage: python3 bench/plot.py FILE.json [FILE.json ...] [--out-dir DIR]

Prints one Markdown table per file to stdout and writes DIR/<file name>.svg (standard library
only, hand-written SVG) for the benchmarks it knows:
  assembly  per mesh size and order, stacked per-entry stage times against the peer's total
            (the fused linear cases; with an inline_summary, its table follows each table)
  spmv      SpMV time against tets per order with the peers; fraction of copy bandwidth (CUDA)
            or achieved GB/s (CPU) on a second panel
  step      per case, stacked per-stage frame times as horizontal bars, one panel per order, fps
  pcg       us per PCG iteration against tets per solver variant, and relative to the first one
Other benchmarks and files of another shape are skipped with a note on stderr. With matplotlib
installed it also writes DIR/<backend>_assembly.png and DIR/<backend>_spmv.png as before.
Exit status: 0, or 2 on usage, 3 if a file could not be read as JSON (the others still are).
"""
import json
import math
import os
import sys
from xml.sax.saxutils import escape, quoteattr

STAGES = ["count", "bin_offsets", "alloc", "columns", "maps", "element", "summation"]
STEP_STAGES = ["element", "summation", "pcg", "line_search"]

def fmt(v, digits=3):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def baseline_total(case):
    b = case.get("baseline", {})
    m = b.get("median_ms")
    if isinstance(m, dict):
        return m.get("total")
    return m


def assembly_table(doc):
    rows = ["| mesh | tets | p | material | method | " + " | ".join(STAGES) +
            " | total | summation only | peer | peer total | peak/(matrix+maps+mesh) |",
            "|" + "---|" * (len(STAGES) + 10)]
    for c in doc["cases"]:
        if "skipped" in c:
            rows.append(f"| {c['mesh']} | {c['tets']} | {c['order']} | "
                        f"{material_label(c)} | {c.get('method', '')} | "
                        f"skipped: {c['skipped']} |")
            continue
        m = c["median_ms"]
        b = c.get("bytes", {})
        rows.append("| " + " | ".join([
            c["mesh"], str(c["tets"]), str(c["order"]), material_label(c), c["method"],
            *[fmt(m.get(s)) for s in STAGES], fmt(m.get("total")), fmt(m.get("summation_only")),
            c.get("baseline", {}).get("name", "-"), fmt(baseline_total(c)),
            fmt(b.get("peak_over_matrix_maps_mesh"))]) + " |")
    return "\n".join(rows)


def spmv_table(doc):
    rows = ["| mesh | tets | p | nnz blocks | ours ms | GB/s | peer | peer ms | speedup | "
            "CSR ms | frac. of copy BW |", "|" + "---|" * 11]
    for c in doc["cases"]:
        if "skipped" in c:
            rows.append(f"| {c['mesh']} | {c['tets']} | {c['order']} | skipped: {c['skipped']} |")
            continue
        b = c.get("baseline", {})
        sp = c.get("speedup", {})
        speed = sp.get("over_bsr", sp.get("over_eigen"))
        rows.append("| " + " | ".join([
            c["mesh"], str(c["tets"]), str(c["order"]), str(c["nnz_blocks"]),
            fmt(c["median_ms"]["spmv"]), fmt(c.get("bandwidth_gbps")), b.get("name", "-"),
            fmt(b.get("median_ms")), fmt(speed),
            fmt(c.get("baseline_csr", {}).get("median_ms")),
            fmt(c.get("fraction_of_copy_bandwidth"))]) + " |")
    return "\n".join(rows)


def step_table(doc):
    rows = ["| p | material | method | scene | preconditioner | " + " | ".join(STEP_STAGES) +
            " | total | fps | Newton | CG | baseline total |", "|" + "---|" * 14]
    for c in doc["cases"]:
        if "skipped" in c:
            rows.append(f"| {c.get('order')} | {c.get('material', '')} | {c.get('method', '')} | "
                        f"skipped: {c['skipped']} |")
            continue
        m = c["median_ms"]
        rows.append("| " + " | ".join([
            str(c["order"]), c.get("material", "-"), c.get("method", "-"), c.get("scene", "-"),
            c.get("preconditioner", "-"), *[fmt(m.get(s)) for s in STEP_STAGES],
            fmt(m.get("total")), fmt(c.get("fps")), fmt(c.get("newton_iterations")),
            fmt(c.get("cg_iterations")), fmt(baseline_total(c))]) + " |")
    return "\n".join(rows)


def pcg_table(doc):
    rows = ["| mesh | tets | p | variant | us/iteration | 1e-4 iterations | converged | "
            "peer | peer us/iteration |", "|" + "---|" * 9]
    for c in doc["cases"]:
        if "skipped" in c:
            rows.append(f"| {c['mesh']} | {c['tets']} | {c['order']} | skipped: {c['skipped']} |")
            continue
        b = c.get("baseline", {})
        for v in c["variants"]:
            rows.append("| " + " | ".join([
                c["mesh"], str(c["tets"]), str(c["order"]), v["variant"],
                fmt(v.get("us_per_iteration")), fmt(v.get("tol_1e-4_iterations")),
                fmt(v.get("tol_1e-4_converged")), b.get("name", "-"),
                fmt(b.get("us_per_iteration"))]) + " |")
    return "\n".join(rows)


def material_label(c):
    """The material, with the path of a linear case timed through the simulation backend."""
    m = str(c.get("material", "linear"))
    return m + " (backend)" if m == "linear" and c.get("path") == "simulation_backend" else m


def inline_summary_table(doc):
    """Element + summation ms per (mesh, order, material) and method, with inline's ratios."""
    summary = doc.get("inline_summary")
    if not isinstance(summary, list) or not summary:
        return None
    rows = ["| mesh | p | material | per-entry ms | per-simplex ms | inline ms | "
            "inline / per-entry | inline / per-simplex | MiB inline saves |", "|" + "---|" * 9]
    for r in summary:
        rows.append("| " + " | ".join([
            str(r.get("mesh")), str(r.get("order")), material_label(r),
            fmt(r.get("per_entry_ms")), fmt(r.get("per_simplex_ms")), fmt(r.get("inline_ms")),
            fmt(r.get("inline_over_per_entry")), fmt(r.get("inline_over_per_simplex")),
            fmt(r.get("element_blocks_mib_saved"))]) + " |")
    return "\n".join(rows)


TABLES = {"assembly": assembly_table, "spmv": spmv_table, "step": step_table, "pcg": pcg_table}


# ---------------------------------------------------------------------------------------------
# SVG plots, standard library only.

FONT_W = 0.58  # mean glyph advance of a sans-serif font, in font sizes (for layout estimates)
COLORS = ["#3566a8", "#e0802c", "#3f9a48", "#c8363a", "#8a63b8", "#8d5a4a", "#d670b8",
          "#6f6f6f", "#a8a826", "#25a9bb"]
STAGE_COLORS = {"count": "#9ab8dc", "bin_offsets": "#3566a8", "alloc": "#b0b0b0",
                "columns": "#e0802c", "maps": "#f2c27a", "element": "#8a63b8",
                "summation": "#3f9a48", "pcg": "#c8363a", "line_search": "#e0802c",
                "other": "#d0d0d0"}
MARKERS = ["circle", "square", "triangle", "diamond", "down", "circle", "square", "triangle",
           "diamond", "down"]


def text_width(s, size):
    return len(str(s)) * size * FONT_W


def num(v):
    """Compact number for an SVG attribute."""
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def dig(obj, *keys):
    """obj[k0][k1]... or None when a key is missing or a level is not a dict."""
    for k in keys:
        if not isinstance(obj, dict) or k not in obj:
            return None
        obj = obj[k]
    return obj


def number(v):
    """v as a finite float, or None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def short_count(n):
    """8K, 127K, 1.1M: a mesh size for a category label."""
    return f"{n / 1e6:.2g}M" if n >= 1e6 else f"{n / 1e3:.0f}K" if n >= 1e3 else str(n)


def tick_label(v, style=None):
    v = round(v, 12)
    if style == "si":
        for div, suffix in ((1e6, "M"), (1e3, "K")):
            if abs(v) >= div:
                return f"{v / div:g}{suffix}"
    if v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-3):
        return f"{v:.0e}".replace("e+0", "e").replace("e-0", "e-")
    return f"{v:g}"


class Svg:
    def __init__(self, width, height):
        self.width, self.height, self.items = width, height, []

    def add(self, tag, text=None, **attrs):
        parts = []
        for k, v in attrs.items():
            if v is None:
                continue
            name = k.rstrip("_").replace("_", "-")
            parts.append(f"{name}={quoteattr(num(v) if isinstance(v, float) else str(v))}")
        head = f"<{tag} {' '.join(parts)}" if parts else f"<{tag}"
        self.items.append(f"{head}/>" if text is None else f"{head}>{escape(str(text))}</{tag}>")

    def line(self, x1, y1, x2, y2, color="#000", width=1.0, dash=None):
        self.add("line", x1=float(x1), y1=float(y1), x2=float(x2), y2=float(y2), stroke=color,
                 stroke_width=float(width), stroke_dasharray=dash)

    def rect(self, x, y, w, h, fill, stroke=None):
        self.add("rect", x=float(x), y=float(y), width=float(max(w, 0)), height=float(max(h, 0)),
                 fill=fill, stroke=stroke, stroke_width=0.5 if stroke else None)

    def text(self, x, y, s, size=11, anchor="start", weight=None, rotate=None, color=None,
             style=None):
        self.add("text", s, x=float(x), y=float(y), font_size=size,
                 text_anchor=None if anchor == "start" else anchor, font_weight=weight,
                 fill=color, font_style=style,
                 transform=f"rotate({num(rotate)} {num(x)} {num(y)})" if rotate else None)

    def polyline(self, pts, color, width=1.6, dash=None):
        if len(pts) > 1:
            self.add("polyline", points=" ".join(f"{num(x)},{num(y)}" for x, y in pts),
                     fill="none", stroke=color, stroke_width=float(width),
                     stroke_dasharray=dash)

    def marker(self, x, y, kind, color, r=3.5):
        if kind == "circle":
            self.add("circle", cx=float(x), cy=float(y), r=float(r), fill=color)
            return
        shapes = {"square": [(-1, -1), (1, -1), (1, 1), (-1, 1)],
                  "triangle": [(0, -1.25), (1.15, 0.85), (-1.15, 0.85)],
                  "down": [(0, 1.25), (1.15, -0.85), (-1.15, -0.85)],
                  "diamond": [(0, -1.4), (1.1, 0), (0, 1.4), (-1.1, 0)]}
        pts = shapes.get(kind, shapes["square"])
        self.add("polygon", points=" ".join(f"{num(x + r * a)},{num(y + r * b)}" for a, b in pts),
                 fill=color)

    def render(self):
        return "\n".join([
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{num(self.width)}" '
            f'height="{num(self.height)}" viewBox="0 0 {num(self.width)} {num(self.height)}" '
            f'font-family="DejaVu Sans, Arial, Helvetica, sans-serif">',
            f'<rect width="100%" height="100%" fill="#fff"/>', *self.items, "</svg>", ""])

    def save(self, path):
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(self.render())
        os.replace(tmp, path)


class Scale:
    """Maps data to pixels: kind "lin", "log" or "cat" (categories 0..n-1 in bands)."""

    def __init__(self, kind, lo, hi, p0, p1, labels=None, style=None):
        self.kind, self.lo, self.hi, self.p0, self.p1 = kind, lo, hi, p0, p1
        self.labels, self.style = labels, style

    def __call__(self, v):
        if self.kind == "cat":
            return self.p0 + (v + 0.5) * (self.p1 - self.p0) / len(self.labels)
        if self.kind == "log":
            v = min(max(v, self.lo), self.hi) if v > 0 else self.lo
            t = math.log10(v / self.lo) / math.log10(self.hi / self.lo)
        else:
            t = (v - self.lo) / (self.hi - self.lo)
        return self.p0 + t * (self.p1 - self.p0)

    def band(self):
        return abs(self.p1 - self.p0) / max(len(self.labels), 1)

    def ticks(self):
        """[(value, label or None)]; a None label is a minor tick."""
        if self.kind == "cat":
            return [(i, s) for i, s in enumerate(self.labels)]
        if self.kind == "lin":
            step = nice_step((self.hi - self.lo) / 5)
            n = int(round((self.hi - self.lo) / step))
            return [(self.lo + i * step, tick_label(self.lo + i * step, self.style))
                    for i in range(n + 1)]
        few = math.log10(self.hi / self.lo) <= 2.5
        out = []
        for k in range(math.floor(math.log10(self.lo)), math.ceil(math.log10(self.hi)) + 1):
            for m in range(1, 10):
                v = m * 10.0 ** k
                if self.lo * (1 - 1e-9) <= v <= self.hi * (1 + 1e-9):
                    major = m == 1 or (few and m in (2, 5))
                    out.append((v, tick_label(v, self.style) if major else None))
        return out


def nice_step(raw):
    if raw <= 0:
        return 1.0
    e = 10.0 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * e * (1 + 1e-9):
            return m * e
    return 10 * e


def snap125(v, up):
    """The nearest of 1, 2, 5 x 10^k at or below (up=False) or at or above (up=True) v > 0."""
    k = math.floor(math.log10(v))
    cands = [m * 10.0 ** j for j in (k - 1, k, k + 1) for m in (1, 2, 5)]
    if up:
        return min(c for c in cands if c >= v * (1 - 1e-9))
    return max(c for c in cands if c <= v * (1 + 1e-9))


def auto_scale(values, p0, p1, log=None, zero=False, style=None, headroom=1.0):
    """A linear or (when every value is positive and they span >= 20x) logarithmic scale."""
    vals = [v for v in (number(x) for x in values) if v is not None]
    if not vals:
        vals = [0.0, 1.0]
    pos = [v for v in vals if v > 0]
    if log is None:
        log = len(pos) == len(vals) and max(vals) / min(vals) >= 20
    if log and pos:
        lo, hi = snap125(min(pos), False), snap125(max(pos) * headroom, True)
        if hi <= lo:
            hi = snap125(lo * 1.5, True)
        return Scale("log", lo, hi, p0, p1, style=style)
    lo, hi = min(vals), max(vals) * headroom if max(vals) > 0 else max(vals)
    if zero:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi - lo < 1e-12 * max(abs(hi), 1.0):
        lo, hi = lo - 0.5 * max(abs(lo), 1.0), hi + 0.5 * max(abs(hi), 1.0)
        if zero and vals[0] >= 0:
            lo = 0.0
    step = nice_step((hi - lo) / 5)
    return Scale("lin", math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step,
                 p0, p1, style=style)


class Panel:
    """A plot area at (x, y) of w x h pixels with its two scales."""

    def __init__(self, svg, x, y, w, h):
        self.svg, self.x, self.y, self.w, self.h = svg, x, y, w, h
        self.xs = self.ys = None

    def set_x(self, values=None, labels=None, **kw):
        self.xs = (Scale("cat", 0, 1, self.x, self.x + self.w, labels=labels) if labels is not None
                   else auto_scale(values, self.x, self.x + self.w, **kw))
        return self.xs

    def set_y(self, values=None, labels=None, **kw):
        self.ys = (Scale("cat", 0, 1, self.y, self.y + self.h, labels=labels) if labels is not None
                   else auto_scale(values, self.y + self.h, self.y, **kw))
        return self.ys

    def axes(self, title=None, xlabel=None, ylabel=None, xrotate=0):
        s, x0, y0, x1, y1 = self.svg, self.x, self.y, self.x + self.w, self.y + self.h
        s.rect(x0, y0, self.w, self.h, "#fafafa")
        for v, lab in self.xs.ticks():
            if self.xs.kind == "cat" and not lab:
                continue  # a gap between groups
            px = self.xs(v)
            if self.xs.kind != "cat":
                s.line(px, y0, px, y1, "#e2e2e2" if lab is not None else "#f0f0f0")
            s.line(px, y1, px, y1 + (5 if lab is not None else 3), "#444")
            if lab:
                if xrotate:
                    s.text(px + 3, y1 + 13, lab, 10, "end", rotate=xrotate)
                else:
                    s.text(px, y1 + 17, lab, 10, "middle")
        for v, lab in self.ys.ticks():
            py = self.ys(v)
            if self.ys.kind != "cat":
                s.line(x0, py, x1, py, "#e2e2e2" if lab is not None else "#f0f0f0")
            s.line(x0 - (5 if lab is not None else 3), py, x0, py, "#444")
            if lab:
                s.text(x0 - 7, py + 3.5, lab, 10, "end")
        s.add("rect", x=float(x0), y=float(y0), width=float(self.w), height=float(self.h),
              fill="none", stroke="#444", stroke_width=0.8)
        if title:
            s.text(x0, y0 - 8, title, 12, weight="bold")
        if xlabel:
            s.text((x0 + x1) / 2, y1 + (34 if not xrotate else self.x_label_room()), xlabel, 11,
                   "middle")
        if ylabel:
            room = max((text_width(lab, 10) for _, lab in self.ys.ticks() if lab), default=20)
            s.text(x0 - room - 16, (y0 + y1) / 2, ylabel, 11, "middle",
                   rotate=-90 if self.ys.kind != "cat" else None)

    def x_label_room(self):
        longest = max((text_width(lab, 10) for _, lab in self.xs.ticks() if lab), default=0)
        return 22 + longest * 0.7

    def series(self, xs, ys, color, dash=None, marker="circle", width=1.6):
        pts = [(self.xs(x), self.ys(y)) for x, y in zip(xs, ys)
               if number(x) is not None and number(y) is not None
               and (self.ys.kind != "log" or y > 0) and (self.xs.kind != "log" or x > 0)]
        self.svg.polyline(pts, color, width, dash)
        if marker:
            for px, py in pts:
                self.svg.marker(px, py, marker, color)

    def hline(self, y, color="#555", dash="5,4", label=None):
        py = self.ys(y)
        self.svg.line(self.x, py, self.x + self.w, py, color, 1.2, dash)
        if label:
            self.svg.text(self.x + self.w - 4, py - 4, label, 9, "end", color=color)


def legend(svg, x, y, entries, size=10, columns=1, col_width=None):
    """entries: (label, kind, color, dash, marker), kind "box", "line" or "marker"."""
    row = size + 7
    if col_width is None:
        col_width = 34 + max((text_width(e[0], size) for e in entries), default=0)
    for i, (label, kind, color, dash, marker) in enumerate(entries):
        cx, cy = x + (i % columns) * col_width, y + (i // columns) * row
        if kind == "box":
            svg.rect(cx, cy - size + 1, 16, size, color, "#666")
        elif kind == "marker":
            svg.marker(cx + 11, cy - size / 2 + 1, marker, color, 4)
        else:
            svg.line(cx, cy - size / 2 + 1, cx + 22, cy - size / 2 + 1, color, 1.6, dash)
            if marker:
                svg.marker(cx + 11, cy - size / 2 + 1, marker, color, 3)
        svg.text(cx + 28, cy, label, size)
    return ((len(entries) + columns - 1) // columns) * row


def header(svg, doc, what, path, note=None):
    dev = doc.get("device") or "device unknown"
    commit = doc.get("commit")
    title = f"{what} ({doc.get('backend', '?')}): {dev}" + (f", commit {commit}" if commit else "")
    if doc.get("complete") is False:
        title += " [INCOMPLETE run]"
    svg.text(16, 24, title, 15, weight="bold")
    sub = os.path.basename(path)
    if note:
        sub += "; " + note
    svg.width = max(svg.width, 32 + text_width(title, 15), 32 + text_width(sub, 10.5))
    svg.text(16, 42, sub, 10.5, color="#444")


def live_cases(doc):
    return [c for c in doc.get("cases", []) if isinstance(c, dict) and "skipped" not in c]


def by_order(cases):
    out = {}
    for c in cases:
        out.setdefault(c.get("order"), []).append(c)
    return dict(sorted(out.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)))


def svg_assembly(doc, path):
    # The stage plot is the fused linear assembly's (the other materials have no pattern stages).
    cases = [c for c in live_cases(doc) if c.get("path", "fused_linear") == "fused_linear"]
    methods = [c.get("method") for c in cases]
    method = "per_entry" if "per_entry" in methods else (methods[0] if methods else None)
    cases = [c for c in cases if c.get("method") == method and number(c.get("tets"))]
    if not cases:
        return None
    cases.sort(key=lambda c: (c.get("order") or 0, c["tets"]))
    labels, slots, prev = [], [], None
    for c in cases:
        if prev is not None and c.get("order") != prev:
            labels.append("")
            slots.append(None)
        prev = c.get("order")
        labels.append(f"{short_count(c['tets'])} p{c.get('order')}")
        slots.append(c)
    peer = next((dig(c, "baseline", "name") for c in cases if dig(c, "baseline", "name")), None)
    stages = [s for s in STAGES if any(number(dig(c, "median_ms", s)) for c in cases)]
    entries = [(s, "box", STAGE_COLORS[s], None, None) for s in reversed(stages)]
    entries.append(("ours: total", "line", "#000", None, None))
    if peer:
        entries.append((f"peer total: {peer}", "marker", "#000", None, "diamond"))
    leg_w = 40 + max(text_width(e[0], 10) for e in entries)
    pw = max(360, 32 * len(labels))
    svg = Svg(80 + pw + 30 + leg_w, 60 + 360 + 100)
    header(svg, doc, "First assembly, stage medians", path,
           f"method {method}; bars: stages stacked (log scale), "
           f"label: peer total / our total")
    p = Panel(svg, 80, 70, pw, 350)
    p.set_x(labels=labels)
    tops = []
    for c in cases:
        tops += [number(dig(c, "median_ms", "total")), number(baseline_total(c))]
        tops += [number(dig(c, "median_ms", s)) for s in stages]
    p.set_y([v for v in tops if v], log=None)
    p.axes(None, None, "median ms", xrotate=-45)
    bw = p.xs.band() * 0.7
    for i, c in enumerate(slots):
        if c is None:
            continue
        cx, base = p.xs(i), 0.0
        for s in stages:
            v = number(dig(c, "median_ms", s)) or 0.0
            if v <= 0:
                continue
            y_top, y_bot = p.ys(base + v), p.ys(base) if base > 0 else p.y + p.h
            svg.rect(cx - bw / 2, y_top, bw, y_bot - y_top, STAGE_COLORS[s])
            base += v
        total = number(dig(c, "median_ms", "total"))
        if total:
            svg.line(cx - bw / 2 - 2, p.ys(total), cx + bw / 2 + 2, p.ys(total), "#000", 1.6)
        pt = number(baseline_total(c))
        if pt:
            svg.marker(cx, p.ys(pt), "diamond", "#000", 4)
            if total:
                svg.text(cx, min(p.ys(pt), p.ys(total)) - 7, f"{pt / total:.1f}x", 8.5, "middle")
    legend(svg, p.x + p.w + 24, p.y + 10, entries)
    return svg


def svg_spmv(doc, path):
    cases = [c for c in live_cases(doc) if number(c.get("tets")) and
             number(dig(c, "median_ms", "spmv"))]
    if not cases:
        return None
    orders = by_order(cases)
    copy_bw = number(doc.get("copy_bandwidth_gbps"))
    peers = [("baseline", "5,4", "square"), ("baseline_csr", "1.5,3", "triangle")]
    peer_names = {k: next((dig(c, k, "name") for c in cases if dig(c, k, "name")), None)
                  for k, _, _ in peers}
    # The upper-part product (CUDA, session 5): drawn like a peer, labelled as ours.
    if any(number(dig(c, "upper", "median_ms")) for c in cases):
        peers.append(("upper", "9,3", "diamond"))
        peer_names["upper"] = "upper part (ours)"
    entries = [(f"p = {o}", "box", COLORS[i % len(COLORS)], None, None)
               for i, o in enumerate(orders)]
    entries.append(("Bin-BCSR* (ours)", "line", "#333", None, "circle"))
    entries += [(peer_names[k], "line", "#333", d, m) for k, d, m in peers if peer_names[k]]
    leg_w = 40 + max(text_width(e[0], 10) for e in entries)
    pw, ph = 380, 320
    svg = Svg(80 + pw + 90 + pw + 30 + leg_w, 70 + ph + 70)
    header(svg, doc, "SpMV", path, "medians; y = A x with 3x3 blocks")
    p1 = Panel(svg, 80, 72, pw, ph)
    p1.set_x([c["tets"] for c in cases], style="si")
    times = [number(dig(c, "median_ms", "spmv")) for c in cases]
    times += [number(dig(c, k, "median_ms")) for c in cases for k, _, _ in peers]
    p1.set_y(times)
    p1.axes("time per SpMV", "tets", "median ms")
    p2 = Panel(svg, 80 + pw + 90, 72, pw, ph)
    p2.set_x([c["tets"] for c in cases], style="si")
    if copy_bw:
        def second(c, key):
            if key is None:
                return number(c.get("fraction_of_copy_bandwidth"))
            if key == "upper":  # the full format's byte floor over its time
                return number(dig(c, "upper", "full_floor_fraction"))
            bw = number(dig(c, key, "bandwidth_gbps"))
            return bw / copy_bw if bw is not None else None
        p2.set_y([1.0] + [second(c, k) for c in cases for k in [None] + [p[0] for p in peers]],
                 log=False, zero=True)
        p2.axes(f"byte floor / time, as a fraction of copy bandwidth ({copy_bw:.0f} GB/s)",
                "tets", "fraction of copy bandwidth")
        p2.hline(0.85, label="0.85 (target #3)")
    else:
        def second(c, key):
            return number(c.get("bandwidth_gbps") if key is None
                          else dig(c, key, "bandwidth_gbps"))
        p2.set_y([second(c, k) for c in cases for k in (None, "baseline", "baseline_csr")],
                 log=False, zero=True)
        p2.axes("byte floor / time", "tets", "GB/s")
    for i, (o, cs) in enumerate(orders.items()):
        cs = sorted(cs, key=lambda c: c["tets"])
        color, xs = COLORS[i % len(COLORS)], [c["tets"] for c in cs]
        p1.series(xs, [dig(c, "median_ms", "spmv") for c in cs], color)
        p2.series(xs, [second(c, None) for c in cs], color)
        for k, dash, mark in peers:
            if peer_names[k]:
                p1.series(xs, [dig(c, k, "median_ms") for c in cs], color, dash, mark, 1.2)
                p2.series(xs, [second(c, k) for c in cs], color, dash, mark, 1.2)
    legend(svg, p2.x + p2.w + 24, p2.y + 10, entries)
    return svg


def step_label(c, show_pre):
    parts = [str(c.get("material", "?")), str(c.get("method", "?"))]
    if c.get("scene", "gravity") != "gravity":
        parts.append(str(c["scene"]))
    if show_pre and c.get("preconditioner"):
        parts.append(str(c["preconditioner"]))
    return " ".join(parts)


def svg_step(doc, path):
    cases = [c for c in live_cases(doc) if number(dig(c, "median_ms", "total"))]
    if not cases:
        return None
    show_pre = len({c.get("preconditioner") for c in cases}) > 1
    orders = by_order(cases)
    label_w = max(text_width(step_label(c, show_pre), 10) for c in cases) + 20
    row, pw = 22, 520
    entries = [(s, "box", STAGE_COLORS[s], None, None) for s in STEP_STAGES]
    entries.append(("rest of the step (total - stages)", "box", STAGE_COLORS["other"], None, None))
    heights = [len(cs) * row for cs in orders.values()]
    height = 90 + sum(h + 70 for h in heights) + 10
    svg = Svg(label_w + pw + 40, height)
    scene = doc.get("scene") if isinstance(doc.get("scene"), dict) else {}
    header(svg, doc, "Simulation step, ms per frame", path,
           f"{scene.get('mesh', '')} {scene.get('tets', '')} tets; medians over "
           f"{scene.get('frames', '?')} frames; stages timed separately")
    legend(svg, label_w, 66, entries, columns=3, col_width=pw / 3 + 10)
    y = 66 + 2 * 17 + 30
    for (o, cs), h in zip(orders.items(), heights):
        p = Panel(svg, label_w, y, pw, h)
        p.set_y(labels=[step_label(c, show_pre) for c in cs])
        p.set_x([c["median_ms"]["total"] for c in cs], log=False, zero=True, headroom=1.35)
        nodes = next((c.get("nodes") for c in cs if c.get("nodes")), None)
        tets = next((c.get("tets") for c in cs if c.get("tets")), None)
        p.axes(f"p = {o}: {tets} tets, {nodes} nodes", "ms per frame (median)")
        bh = p.ys.band() * 0.7
        for i, c in enumerate(cs):
            cy, base = p.ys(i), 0.0
            m = c["median_ms"]
            for s in STEP_STAGES:
                v = number(m.get(s)) or 0.0
                if v > 0:
                    svg.rect(p.xs(base), cy - bh / 2, p.xs(base + v) - p.xs(base), bh,
                             STAGE_COLORS[s])
                    base += v
            total = number(m["total"])
            if total > base:
                svg.rect(p.xs(base), cy - bh / 2, p.xs(total) - p.xs(base), bh,
                         STAGE_COLORS["other"])
            elif total < base:  # the stages overlap: mark where the whole step ended
                svg.line(p.xs(total), cy - bh / 2 - 2, p.xs(total), cy + bh / 2 + 2, "#000", 1.4)
            fps = number(c.get("fps"))
            svg.text(p.xs(max(total, base)) + 5, cy + 3.5,
                     f"{total:.3g} ms" + (f", {fps:.3g} fps" if fps else ""), 9.5)
        y += h + 70
    return svg


def svg_pcg(doc, path):
    cases = [c for c in live_cases(doc) if number(c.get("tets"))
             and isinstance(c.get("variants"), list)]
    if not cases:
        return None
    multi = len({c.get("order") for c in cases}) > 1
    keys, data, ref = [], {}, {}
    for c in sorted(cases, key=lambda c: (c.get("order") or 0, c["tets"])):
        first = None
        for v in c["variants"]:
            us = number(dig(v, "us_per_iteration"))
            if us is None:
                continue
            first = first or (us if us > 0 else None)
            key = (str(v.get("variant")), c.get("order"))
            if key not in data:
                keys.append(key)
                data[key] = []
            data[key].append((c["tets"], us, us / first if first else None))
        peer = number(dig(c, "baseline", "us_per_iteration"))
        if peer:
            key = (f"peer: {dig(c, 'baseline', 'name')}", c.get("order"))
            if key not in data:
                keys.append(key)
                data[key] = []
            data[key].append((c["tets"], peer, None))
        ref[c.get("order")] = ref.get(c.get("order")) or next(
            (str(v.get("variant")) for v in c["variants"]), "?")
    style = {}
    for k in keys:
        if k[0].startswith("peer: "):
            style[k] = ("#000", "5,4", "square")
        else:
            i = sum(1 for s in style if not s[0].startswith("peer: "))
            style[k] = (COLORS[i % len(COLORS)], None if i < len(COLORS) else "6,3",
                        MARKERS[i % len(MARKERS)])

    def name(k):
        return f"p{k[1]} {k[0]}" if multi else k[0]
    entries = [(name(k), "line") + style[k] for k in keys]
    leg_w = 40 + max(text_width(e[0], 10) for e in entries)
    pw, ph = 360, 320
    svg = Svg(max(80 + pw + 90 + pw + 30 + leg_w, 700), 72 + max(ph, len(entries) * 17) + 70)
    header(svg, doc, "PCG, us per iteration", path,
           "difference of a 40- and a 440-iteration capped solve, best of --repeat")
    p1 = Panel(svg, 80, 72, pw, ph)
    p1.set_x([t for k in keys for t, _, _ in data[k]], style="si")
    p1.set_y([u for k in keys for _, u, _ in data[k]])
    only = "" if multi else f", p = {cases[0].get('order')}"
    p1.axes(f"us per iteration{only}", "tets", "us per iteration")
    p2 = Panel(svg, 80 + pw + 90, 72, pw, ph)
    p2.set_x([t for k in keys for t, _, _ in data[k]], style="si")
    p2.set_y([r for k in keys for _, _, r in data[k] if r is not None], log=False)
    refs = "; ".join(f"p{o}: {r}" for o, r in ref.items()) if multi else next(iter(ref.values()))
    p2.axes(f"relative to the first variant{only}", "tets", "us per iteration / first variant's")
    svg.text(p2.x, p2.y + p2.h + 50, f"first variant: {refs}", 9.5, color="#444")
    for k in keys:
        color, dash, mark = style[k]
        pts = data[k]
        p1.series([t for t, _, _ in pts], [u for _, u, _ in pts], color, dash, mark)
        if not k[0].startswith("peer: "):
            p2.series([t for t, _, _ in pts], [r for _, _, r in pts], color, dash, mark)
    legend(svg, p2.x + p2.w + 24, p2.y + 10, entries)
    return svg


SVG_PLOTS = {"assembly": svg_assembly, "spmv": svg_spmv, "step": svg_step, "pcg": svg_pcg}


def plot_assembly(plt, doc, path):
    cases = [c for c in doc["cases"] if "skipped" not in c and c["method"] == "per_entry"
             and c.get("path", "fused_linear") == "fused_linear"]
    if not cases:
        return
    labels = [f"{c['tets'] // 1000}K p{c['order']}" for c in cases]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(14, 5))
    bottom = [0.0] * len(cases)
    for s in STAGES:
        vals = [c["median_ms"].get(s) or 0.0 for c in cases]
        ax.bar(labels, vals, bottom=bottom, label=s)
        bottom = [a + b for a, b in zip(bottom, vals)]
    peer = [baseline_total(c) for c in cases]
    ax.plot(labels, [p if p is not None else float("nan") for p in peer], "k*", markersize=10,
            label=cases[0]["baseline"]["name"])
    ax.set_yscale("log")
    ax.set_ylabel("median ms")
    ax.set_title(f"first assembly, per-entry ({doc['device']})")
    ax.tick_params(axis="x", rotation=60)
    ax.legend(fontsize=7)
    width = 0.27
    xs = range(len(cases))
    for i, key in enumerate(["bin_bcsr", "bsr", "csr"]):
        ax2.bar([x + (i - 1) * width for x in xs], [c["bytes"].get(key, 0) / 2**20 for c in cases],
                width, label=key)
    peaks = [c["bytes"].get("peak_device") for c in cases]
    if any(p is not None for p in peaks):
        ax2.plot(list(xs), [p / 2**20 if p else float("nan") for p in peaks], "k_", markersize=14,
                 label="peak device (ours)")
    ax2.set_xticks(list(xs))
    ax2.set_xticklabels(labels, rotation=60)
    ax2.set_yscale("log")
    ax2.set_ylabel("MiB")
    ax2.set_title("matrix memory")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_spmv(plt, doc, path):
    cases = [c for c in doc["cases"] if "skipped" not in c]
    if not cases:
        return
    labels = [f"{c['tets'] // 1000}K p{c['order']}" for c in cases]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 5))
    xs = list(range(len(cases)))
    ax.plot(xs, [c["median_ms"]["spmv"] for c in cases], "o-", label="Bin-BCSR*")
    ax.plot(xs, [c["baseline"]["median_ms"] for c in cases], "s--", label=cases[0]["baseline"]["name"])
    if "baseline_csr" in cases[0]:
        ax.plot(xs, [c["baseline_csr"]["median_ms"] for c in cases], "^:", label="cusparse_csr_spmv")
    ax.set_yscale("log")
    ax.set_ylabel("median ms per SpMV")
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, rotation=60)
    ax.set_title(f"SpMV ({doc['device']})")
    ax.legend(fontsize=8)
    ax2.plot(xs, [c.get("bandwidth_gbps") for c in cases], "o-", label="Bin-BCSR* (byte floor / time)")
    ax2.plot(xs, [c["baseline"].get("bandwidth_gbps") for c in cases], "s--", label=cases[0]["baseline"]["name"])
    if "copy_bandwidth_gbps" in doc:
        ax2.axhline(doc["copy_bandwidth_gbps"], color="k", linestyle=":", label="D2D copy")
    ax2.set_ylabel("GB/s")
    ax2.set_xticks(xs)
    ax2.set_xticklabels(labels, rotation=60)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv):
    out_dir = "."
    files = []
    i = 0
    while i < len(argv):
        if argv[i] == "--out-dir" and i + 1 < len(argv):
            out_dir = argv[i + 1]
            i += 2
        else:
            files.append(argv[i])
            i += 1
    if not files:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    status = 0
    loaded = []
    for f in files:
        try:
            with open(f) as fh:
                doc = json.load(fh)
        except (OSError, ValueError) as e:
            print(f"plot.py: {f}: {e}", file=sys.stderr)
            status = 3
            continue
        kind = doc.get("benchmark") if isinstance(doc, dict) else None
        if kind not in TABLES or not isinstance(doc.get("cases"), list):
            print(f"plot.py: {f}: skipped: not a Bench JSON file of a known benchmark "
                  f"({', '.join(TABLES)}); benchmark = {kind!r}", file=sys.stderr)
            continue
        loaded.append((f, doc))
    os.makedirs(out_dir, exist_ok=True)
    plotted = []
    for f, d in loaded:
        try:
            table = TABLES[d["benchmark"]](d)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
            print(f"plot.py: {f}: no table: unexpected case shape ({type(e).__name__}: {e})",
                  file=sys.stderr)
            table = None
        if table is not None:
            incomplete = "" if d.get("complete", True) else ", INCOMPLETE"
            print(f"### {d['benchmark']} / {d.get('backend')} / {d.get('device')} "
                  f"(commit {d.get('commit')}{incomplete})\n")
            print(table)
            print()
            summary = inline_summary_table(d)
            if summary:
                print("element + summation (assembly.total_ms; step: per Newton iteration)\n")
                print(summary)
                print()
        name = os.path.join(out_dir, os.path.splitext(os.path.basename(f))[0] + ".svg")
        try:
            svg = SVG_PLOTS[d["benchmark"]](d, f)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError,
                ZeroDivisionError) as e:
            print(f"plot.py: {f}: no plot: unexpected case shape ({type(e).__name__}: {e})",
                  file=sys.stderr)
            continue
        if svg is None:
            print(f"plot.py: {f}: no plot: no usable cases", file=sys.stderr)
            continue
        svg.save(name)
        plotted.append(d)
        print(f"plot.py: wrote {name}", file=sys.stderr)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot.py: matplotlib not available; SVGs only, no PNGs", file=sys.stderr)
        return status
    for d in plotted:
        if d["benchmark"] not in ("assembly", "spmv"):
            continue
        name = os.path.join(out_dir, f"{d['backend']}_{d['benchmark']}.png")
        try:
            (plot_assembly if d["benchmark"] == "assembly" else plot_spmv)(plt, d, name)
        except (KeyError, TypeError, ValueError, IndexError) as e:
            print(f"plot.py: {name}: no PNG ({type(e).__name__}: {e})", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
