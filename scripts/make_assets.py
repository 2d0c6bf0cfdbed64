#!/usr/bin/env python3
"""Regenerate the surface meshes in assets/ (Python 3 standard library only).

    python3 scripts/make_assets.py            # writes assets/*.obj, default_scene.txt, checks them
    python3 scripts/make_assets.py --check F  # only runs the checks on an existing OBJ
    python3 scripts/make_assets.py --render   # also writes assets/previews/*.png views

Outputs (all closed, edge- and vertex-manifold, outward oriented, one component,
no degenerate or self-intersecting triangles; units metres, +z up):
  assets/bunny.obj   Stanford bunny (npm package `bunny` 1.0.1), decimated to 2200 triangles,
                     height 1, base on z=0
  assets/beam.obj    box 1.0 x 0.1 x 0.1 (x long), centred at the origin, 20x2x2 cells a side
  assets/sphere.obj  icosphere, radius 0.25, 3 subdivisions (1280 triangles), centred
The script is deterministic: the same input gives byte-identical files on a given platform.
"""

import argparse
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASSETS = os.path.join(ROOT, "assets")
BUNNY_SOURCE = os.path.join(ASSETS, "source", "bunny-npm-1.0.1", "index.js")

# ---------------------------------------------------------------------------------------------
# small vector helpers (tuples of floats)


def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


def scale(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def norm(a):
    return math.sqrt(dot(a, a))


def normalize(a):
    n = norm(a)
    return (a[0] / n, a[1] / n, a[2] / n)


def tri_normal(p, t):
    """Unnormalised normal (twice the area vector) of triangle t."""
    a, b, c = p[t[0]], p[t[1]], p[t[2]]
    return cross(sub(b, a), sub(c, a))


# ---------------------------------------------------------------------------------------------
# OBJ io


def read_obj(path):
    verts, tris = [], []
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "v":
                verts.append((float(w[1]), float(w[2]), float(w[3])))
            elif w[0] == "f":
                idx = [int(s.split("/")[0]) - 1 for s in w[1:]]
                for k in range(1, len(idx) - 1):
                    tris.append((idx[0], idx[k], idx[k + 1]))
    return verts, tris


def fmt(x):
    s = "%.6f" % x
    return "0.000000" if s == "-0.000000" else s


def write_obj(path, verts, tris, header):
    lines = ["# " + h for h in header]
    lines += ["v %s %s %s" % (fmt(v[0]), fmt(v[1]), fmt(v[2])) for v in verts]
    lines += ["f %d %d %d" % (t[0] + 1, t[1] + 1, t[2] + 1) for t in tris]
    tmp = path + ".tmp"
    with open(tmp, "w", newline="\n") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def quantize(verts):
    """Round to the 6 decimals that the OBJ stores, so checks see exactly what is written."""
    return [tuple(float(fmt(c)) for c in v) for v in verts]


# ---------------------------------------------------------------------------------------------
# checks


def edge_map(tris):
    """Directed edge (a, b) -> list of triangle indices."""
    em = {}
    for i, t in enumerate(tris):
        for k in range(3):
            em.setdefault((t[k], t[(k + 1) % 3]), []).append(i)
    return em


def components(nv, tris):
    parent = list(range(nv))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for t in tris:
        for k in (1, 2):
            a, b = find(t[0]), find(t[k])
            if a != b:
                parent[a] = b
    used = set(v for t in tris for v in t)
    return len(set(find(v) for v in used))


def vertex_manifold_failures(tris):
    """Vertices whose incident triangles do not form a single edge-connected fan."""
    inc = {}
    for i, t in enumerate(tris):
        for v in t:
            inc.setdefault(v, []).append(i)
    bad = 0
    for v, ts in inc.items():
        # link edges opposite v; a closed manifold vertex has a link that is one cycle
        nxt = {}
        ok = True
        for i in ts:
            t = tris[i]
            k = t.index(v)
            a, b = t[(k + 1) % 3], t[(k + 2) % 3]
            if a in nxt:
                ok = False
            nxt[a] = b
        if ok:
            start = next(iter(nxt))
            cur, steps = start, 0
            while True:
                cur = nxt.get(cur)
                steps += 1
                if cur is None or steps > len(nxt):
                    ok = False
                    break
                if cur == start:
                    break
            ok = ok and steps == len(nxt)
        if not ok:
            bad += 1
    return bad


def signed_volume(p, tris):
    vol = 0.0
    for t in tris:
        vol += dot(p[t[0]], cross(p[t[1]], p[t[2]]))
    return vol / 6.0


def orient(a, b, c, d):
    """Six times the signed volume of tetrahedron abcd."""
    return dot(sub(b, a), cross(sub(c, a), sub(d, a)))


def seg_hits_tri(p, q, a, b, c, eps):
    """True when segment pq crosses (or nearly touches) triangle abc; pq not coplanar."""
    s1 = orient(a, b, c, p)
    s2 = orient(a, b, c, q)
    if (s1 > eps and s2 > eps) or (s1 < -eps and s2 < -eps):
        return False
    if abs(s1) <= eps and abs(s2) <= eps:
        return False  # coplanar segment: handled by the coplanar test of the caller
    e1 = orient(p, q, a, b)
    e2 = orient(p, q, b, c)
    e3 = orient(p, q, c, a)
    if (e1 > eps or e2 > eps or e3 > eps) and (e1 < -eps or e2 < -eps or e3 < -eps):
        return False  # the line of pq passes outside the triangle
    # the segment spans the plane and its line passes inside (or within eps of) the triangle
    return True


def tris_intersect(p, t, u, eps):
    """Conservative triangle-triangle test for triangles sharing no vertex."""
    A = [p[i] for i in t]
    B = [p[i] for i in u]
    for k in range(3):
        if seg_hits_tri(A[k], A[(k + 1) % 3], B[0], B[1], B[2], eps):
            return True
        if seg_hits_tri(B[k], B[(k + 1) % 3], A[0], A[1], A[2], eps):
            return True
    # coplanar overlap: all of B in A's plane and a vertex of one inside the other
    n = cross(sub(A[1], A[0]), sub(A[2], A[0]))
    if all(abs(dot(n, sub(x, A[0]))) <= eps for x in B):
        def inside(x, T):
            s = [dot(n, cross(sub(T[(k + 1) % 3], T[k]), sub(x, T[k]))) for k in range(3)]
            return all(v >= 0 for v in s) or all(v <= 0 for v in s)

        if any(inside(x, A) for x in B) or any(inside(x, B) for x in A):
            return True
    return False


def self_intersections(p, tris, limit=20):
    """Pairs of triangles that intersect, via a uniform grid over triangle bounding boxes.

    Non-adjacent pairs get a conservative floating-point test (touching within eps counts)
    whose hits are then confirmed in exact rational arithmetic on the stored coordinates, so
    touching counts too but rounding noise does not; pairs sharing one vertex are tested by the
    edge opposite the shared vertex against the other triangle; pairs sharing an edge are
    flagged when they fold onto each other (dihedral angle near 0).
    Returns (confirmed pairs, number of float-only near-touching pairs).
    """
    from fractions import Fraction

    exact = {}

    def exact_p(i):
        v = exact.get(i)
        if v is None:
            v = tuple(Fraction(c) for c in p[i])
            exact[i] = v
        return v

    near = 0
    lo = [min(v[k] for v in p) for k in range(3)]
    hi = [max(v[k] for v in p) for k in range(3)]
    diag = norm(sub(hi, lo))
    mean_edge = sum(norm(sub(p[t[0]], p[t[1]])) for t in tris) / len(tris)
    cell = 2.0 * mean_edge
    eps = 1e-12 * diag ** 3
    grid = {}
    boxes = []
    for i, t in enumerate(tris):
        bl = [min(p[v][k] for v in t) for k in range(3)]
        bh = [max(p[v][k] for v in t) for k in range(3)]
        boxes.append((bl, bh))
        r = [range(int((bl[k] - lo[k]) / cell), int((bh[k] - lo[k]) / cell) + 1) for k in range(3)]
        for x in r[0]:
            for y in r[1]:
                for z in r[2]:
                    grid.setdefault((x, y, z), []).append(i)
    found = []
    seen = set()
    for cell_tris in grid.values():
        n = len(cell_tris)
        for a in range(n):
            i = cell_tris[a]
            for b in range(a + 1, n):
                j = cell_tris[b]
                key = (i, j) if i < j else (j, i)
                if key in seen:
                    continue
                seen.add(key)
                bi, bj = boxes[i], boxes[j]
                if any(bi[0][k] > bj[1][k] or bj[0][k] > bi[1][k] for k in range(3)):
                    continue
                t, u = tris[i], tris[j]
                shared = set(t) & set(u)
                hit = False
                if not shared:
                    hit = tris_intersect(p, t, u, eps)
                    if hit:
                        ex = {v: exact_p(v) for v in t + u}
                        hit = tris_intersect(ex, t, u, 0)
                        near += 0 if hit else 1
                elif len(shared) == 1:
                    s = next(iter(shared))
                    et = [v for v in t if v != s]
                    eu = [v for v in u if v != s]
                    hit = seg_hits_tri_strict(p, et, u) or seg_hits_tri_strict(p, eu, t)
                else:
                    nt = normalize(tri_normal(p, t))
                    nu = normalize(tri_normal(p, u))
                    hit = dot(nt, nu) < -0.999  # folded back onto its neighbour
                if hit:
                    found.append(key)
                    if len(found) >= limit:
                        return found, near
    return found, near


def seg_hits_tri_strict(p, e, t):
    """Edge e (two vertex ids) properly crosses triangle t (no shared endpoints with e)."""
    a, b, c = p[t[0]], p[t[1]], p[t[2]]
    x, y = p[e[0]], p[e[1]]
    s1, s2 = orient(a, b, c, x), orient(a, b, c, y)
    if s1 * s2 >= 0:
        return False
    e1, e2, e3 = orient(x, y, a, b), orient(x, y, b, c), orient(x, y, c, a)
    return (e1 > 0 and e2 > 0 and e3 > 0) or (e1 < 0 and e2 < 0 and e3 < 0)


def check_mesh(name, p, tris, min_area_rel=1e-4, min_angle_deg=None):
    """Runs every check; returns (ok, report lines, labels of the failed checks)."""
    rep = []
    ok = True
    failed = []
    em = edge_map(tris)
    boundary = sum(1 for (a, b), l in em.items() if (b, a) not in em)
    nonmanifold = sum(1 for (a, b), l in em.items() if len(l) > 1 or len(em.get((b, a), [])) > 1)
    dup = len(tris) - len(set(tuple(sorted(t)) for t in tris))
    nv_used = len(set(v for t in tris for v in t))
    ne = len(set((min(a, b), max(a, b)) for (a, b) in em))
    chi = nv_used - ne + len(tris)
    vbad = vertex_manifold_failures(tris)
    ncomp = components(len(p), tris)
    vol = signed_volume(p, tris)
    areas = [0.5 * norm(tri_normal(p, t)) for t in tris]
    mean_area = sum(areas) / len(areas)
    min_area = min(areas)
    min_ang = 180.0
    for t in tris:
        for k in range(3):
            u = sub(p[t[(k + 1) % 3]], p[t[k]])
            w = sub(p[t[(k + 2) % 3]], p[t[k]])
            cosv = dot(u, w) / max(norm(u) * norm(w), 1e-300)
            min_ang = min(min_ang, math.degrees(math.acos(max(-1.0, min(1.0, cosv)))))
    inter, near = self_intersections(p, tris)
    distinct = len(set(p))
    lo = [min(p[v][k] for t in tris for v in t) for k in range(3)]
    hi = [max(p[v][k] for t in tris for v in t) for k in range(3)]

    def line(label, good, text):
        nonlocal ok
        ok = ok and good
        if not good:
            failed.append(label)
        rep.append("  %-28s %-4s %s" % (label, "ok" if good else "FAIL", text))

    rep.append("%s: %d vertices, %d triangles, bbox [%s] .. [%s]" % (
        name, len(p), len(tris), " ".join("%.4f" % x for x in lo), " ".join("%.4f" % x for x in hi)))
    line("all vertices used", nv_used == len(p), "%d of %d" % (nv_used, len(p)))
    line("distinct vertex positions", distinct == len(p), "%d of %d" % (distinct, len(p)))
    line("closed (no boundary edges)", boundary == 0, "%d boundary half-edges" % boundary)
    line("edge-manifold, consistent", nonmanifold == 0 and dup == 0,
         "%d non-manifold/inconsistent half-edges, %d duplicate triangles" % (nonmanifold, dup))
    line("vertex-manifold", vbad == 0, "%d bad vertex fans" % vbad)
    line("one component", ncomp == 1, "%d component(s)" % ncomp)
    line("genus 0 (Euler 2)", chi == 2, "V-E+F = %d" % chi)
    line("outward (volume > 0)", vol > 0, "signed volume %.6g m^3" % vol)
    line("no degenerate triangle", min_area > min_area_rel * mean_area,
         "min area %.3g = %.3g x mean; min angle %.2f deg" % (min_area, min_area / mean_area, min_ang))
    if min_angle_deg is not None:
        line("min angle", min_ang >= min_angle_deg, "%.2f >= %.1f deg" % (min_ang, min_angle_deg))
    line("not self-intersecting", not inter, "%d intersecting pair(s)%s, %d near-touching" % (
        len(inter), (" e.g. %s" % (inter[:3],)) if inter else "", near))
    return ok, rep, failed
# ---------------------------------------------------------------------------------------------
# models


def load_npm_bunny(path):
    """positions/cells arrays of the npm `bunny` package's index.js (plain JSON literals)."""
    with open(path) as f:
        src = f.read()
    i = src.index("exports.cells=")
    pos = json.loads(src[len("exports.positions="):i].strip().rstrip(";"))
    cells = json.loads(src[i + len("exports.cells="):].strip().rstrip(";"))
    return [tuple(float(c) for c in v) for v in pos], [tuple(c) for c in cells]


def min_angle_deg(a, b, c):
    best = 180.0
    for (p, q, r) in ((a, b, c), (b, c, a), (c, a, b)):
        u, w = sub(q, p), sub(r, p)
        d = norm(u) * norm(w)
        if d == 0:
            return 0.0
        best = min(best, math.degrees(math.acos(max(-1.0, min(1.0, dot(u, w) / d)))))
    return best


def decimate(p, tris, target, min_angle=15.0, max_normal_turn_deg=45.0):
    """Quadric-error (Garland-Heckbert) edge collapses down to `target` triangles.

    A collapse is refused when it breaks the link condition (which keeps the surface a closed
    2-manifold of the same genus), turns any surviving triangle's normal by more than
    max_normal_turn_deg, or creates an angle below min(min_angle, the angle it had).
    Deterministic: ties in the heap are broken by vertex ids.
    """
    import heapq

    p = list(p)
    tris = [list(t) for t in tris]
    vt = [set() for _ in p]
    for i, t in enumerate(tris):
        for v in t:
            vt[v].add(i)
    quad = [[0.0] * 10 for _ in p]  # symmetric 4x4: a2 ab ac ad b2 bc bd c2 cd d2
    for t in tris:
        n = tri_normal(p, t)
        area2 = norm(n)
        if area2 == 0:
            continue
        a, b, c = scale(n, 1.0 / area2)
        d = -dot((a, b, c), p[t[0]])
        k = [a * a, a * b, a * c, a * d, b * b, b * c, b * d, c * c, c * d, d * d]
        for v in t:
            q = quad[v]
            for i in range(10):
                q[i] += 0.5 * area2 * k[i]

    def qcost(q, x):
        X, Y, Z = x
        return (q[0] * X * X + 2 * q[1] * X * Y + 2 * q[2] * X * Z + 2 * q[3] * X + q[4] * Y * Y
                + 2 * q[5] * Y * Z + 2 * q[6] * Y + q[7] * Z * Z + 2 * q[8] * Z + q[9])

    def best_position(a, b):
        q = [x + y for x, y in zip(quad[a], quad[b])]
        cands = [p[a], p[b], scale(add(p[a], p[b]), 0.5)]
        m = ((q[0], q[1], q[2]), (q[1], q[4], q[5]), (q[2], q[5], q[7]))
        det = dot(m[0], cross(m[1], m[2]))
        scale_m = max(abs(x) for r in m for x in r) ** 3
        if abs(det) > 1e-9 * scale_m:
            rhs = (-q[3], -q[6], -q[8])
            c0, c1, c2 = (m[0][0], m[1][0], m[2][0]), (m[0][1], m[1][1], m[2][1]), (m[0][2], m[1][2], m[2][2])
            x = (dot(rhs, cross(c1, c2)) / det, dot(c0, cross(rhs, c2)) / det, dot(c0, cross(c1, rhs)) / det)
            # keep the optimum only near the edge, else it may jump across thin parts
            if norm(sub(x, scale(add(p[a], p[b]), 0.5))) < norm(sub(p[a], p[b])):
                cands.append(x)
        return min((qcost(q, x), i, x) for i, x in enumerate(cands))

    version = [0] * len(p)
    alive_t = len(tris)
    heap = []

    def push(a, b):
        if a > b:
            a, b = b, a
        cost, _, x = best_position(a, b)
        heapq.heappush(heap, (cost, a, b, version[a], version[b], x))

    for a in range(len(p)):
        for ti in vt[a]:
            for b in tris[ti]:
                if b > a:
                    push(a, b)
    while alive_t > target and heap:
        cost, a, b, va, vb, x = heapq.heappop(heap)
        if version[a] != va or version[b] != vb or not vt[a] or not vt[b]:
            continue
        shared = vt[a] & vt[b]
        if len(shared) != 2:
            continue
        na = set(v for ti in vt[a] for v in tris[ti]) - {a}
        nb = set(v for ti in vt[b] for v in tris[ti]) - {b}
        opp = set(v for ti in shared for v in tris[ti]) - {a, b}
        if na & nb != opp:
            continue  # link condition
        ok = True
        for ti in (vt[a] | vt[b]) - shared:
            t = tris[ti]
            old = [p[v] for v in t]
            new = [x if v in (a, b) else p[v] for v in t]
            n0, n1 = cross(sub(old[1], old[0]), sub(old[2], old[0])), cross(sub(new[1], new[0]), sub(new[2], new[0]))
            l0, l1 = norm(n0), norm(n1)
            if l1 == 0 or dot(n0, n1) < math.cos(math.radians(max_normal_turn_deg)) * l0 * l1:
                ok = False
                break
            if min_angle_deg(*new) < min(min_angle, min_angle_deg(*old)):
                ok = False
                break
        if not ok:
            continue
        for ti in shared:
            for v in tris[ti]:
                vt[v].discard(ti)
            tris[ti] = None
            alive_t -= 1
        for ti in vt[b]:
            tris[ti] = [a if v == b else v for v in tris[ti]]
            vt[a].add(ti)
        vt[b] = set()
        p[a] = x
        quad[a] = [u + w for u, w in zip(quad[a], quad[b])]
        version[a] += 1
        version[b] += 1
        for v in set(v for ti in vt[a] for v in tris[ti]) - {a}:
            version[v] += 1
        ring = set(v for ti in vt[a] for v in tris[ti]) - {a}
        for v in ring:  # every edge touching the ring may have changed cost or validity
            for w in set(w for ti in vt[v] for w in tris[ti]):
                if w != v:
                    push(v, w)
    # compact
    keep = [v for v in range(len(p)) if vt[v]]
    remap = {v: i for i, v in enumerate(keep)}
    return [p[v] for v in keep], [tuple(remap[v] for v in t) for t in tris if t is not None]


def make_bunny(target_triangles=2200):
    """The npm bunny (+y up, arbitrary units) decimated, turned +z up, height 1 m, base on z=0,
    centred in x and y.

    The packaged mesh is already closed, manifold, genus 0 and free of self-intersections
    (check_mesh on the source says so), so nothing needs closing. Its 3674 triangles give about
    47K tetrahedra at TetGen quality 1.4; decimation to 2200 triangles gives about 30K.
    """
    p, tris = load_npm_bunny(BUNNY_SOURCE)
    p = [(x, -z, y) for (x, y, z) in p]  # rotation by +90 deg about x: old +y becomes +z
    p, tris = decimate(p, tris, target_triangles)
    lo = [min(v[k] for v in p) for k in range(3)]
    hi = [max(v[k] for v in p) for k in range(3)]
    s = 1.0 / (hi[2] - lo[2])
    c = (0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), lo[2])
    return quantize([scale(sub(v, c), s) for v in p]), tris


def make_beam(length=1.0, width=0.1, cells=(20, 2, 2)):
    """Closed box [-L/2, L/2] x [-W/2, W/2]^2, each face a grid of squares split into 2 triangles."""
    n = cells
    half = (0.5 * length, 0.5 * width, 0.5 * width)
    vid = {}
    verts, tris = [], []

    def vertex(ijk):
        v = vid.get(ijk)
        if v is None:
            v = len(verts)
            vid[ijk] = v
            verts.append(tuple(-half[k] + 2.0 * half[k] * ijk[k] / n[k] for k in range(3)))
        return v

    for ax in range(3):
        u, w = (ax + 1) % 3, (ax + 2) % 3  # (ax, u, w) is a right-handed axis triple
        for side in (0, n[ax]):
            for a in range(n[u]):
                for b in range(n[w]):
                    quad = []
                    for (da, db) in ((0, 0), (1, 0), (1, 1), (0, 1)):
                        ijk = [0, 0, 0]
                        ijk[ax], ijk[u], ijk[w] = side, a + da, b + db
                        quad.append(vertex(tuple(ijk)))
                    if side == 0:  # the quad's normal u x w = +ax; the low face must face -ax
                        quad.reverse()
                    tris.append((quad[0], quad[1], quad[2]))
                    tris.append((quad[0], quad[2], quad[3]))
    return quantize(verts), tris


def make_icosphere(radius=0.25, levels=3):
    """Icosahedron subdivided `levels` times (4 triangles per triangle), projected to the sphere."""
    t = (1.0 + math.sqrt(5.0)) / 2.0
    verts = [normalize(v) for v in (
        (-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
        (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1))]
    tris = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4),
            (11, 10, 2), (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8),
            (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    for _ in range(levels):
        mid = {}

        def midpoint(a, b):
            key = (a, b) if a < b else (b, a)
            m = mid.get(key)
            if m is None:
                m = len(verts)
                verts.append(normalize(scale(add(verts[a], verts[b]), 0.5)))
                mid[key] = m
            return m

        new = []
        for (a, b, c) in tris:
            ab, bc, ca = midpoint(a, b), midpoint(b, c), midpoint(c, a)
            new += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        tris = new
    return quantize([scale(v, radius) for v in verts]), tris


# ---------------------------------------------------------------------------------------------
# preview rendering (orthographic, flat Lambert shading, z-buffer) to PNG


def write_png(path, w, h, rgb):
    import struct
    import zlib

    raw = b"".join(b"\x00" + bytes(rgb[y * w * 3:(y + 1) * w * 3]) for y in range(h))

    def chunk(tag, data):
        c = struct.pack(">I", len(data)) + tag + data
        return c + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


def render_views(path, p, tris, size=320):
    """Four views side by side: front (-y), side (+x), top (+z), oblique; +z is up."""
    views = []
    for az, el in ((0.0, 0.0), (90.0, 0.0), (0.0, 89.9), (35.0, 25.0)):
        a, e = math.radians(az), math.radians(el)
        d = (math.sin(a) * math.cos(e), -math.cos(a) * math.cos(e), math.sin(e))  # toward viewer
        right = normalize(cross((0.0, 0.0, 1.0), d)) if el < 89 else (1.0, 0.0, 0.0)
        up = cross(d, right)
        views.append((d, right, up))
    W = size * len(views)
    img = [40] * (W * size * 3)
    lo = [min(v[k] for v in p) for k in range(3)]
    hi = [max(v[k] for v in p) for k in range(3)]
    c = scale(add(lo, hi), 0.5)
    r = 0.5 * norm(sub(hi, lo)) * 1.05
    light = normalize((0.4, -0.5, 0.8))
    for vi, (d, right, up) in enumerate(views):
        zb = [-1e300] * (size * size)
        sp = []
        for v in p:
            q = sub(v, c)
            sp.append(((dot(q, right) / r + 1) * 0.5 * size, (1 - dot(q, up) / r) * 0.5 * size, dot(q, d)))
        for t in tris:
            n = tri_normal(p, t)
            nn = norm(n)
            if nn == 0 or dot(n, d) <= 0:
                continue
            n = scale(n, 1 / nn)
            shade = 0.25 + 0.75 * max(0.0, dot(n, light))
            col = (int(230 * shade), int(200 * shade), int(170 * shade))
            A, B, C = sp[t[0]], sp[t[1]], sp[t[2]]
            x0 = max(0, int(min(A[0], B[0], C[0])))
            x1 = min(size - 1, int(max(A[0], B[0], C[0])) + 1)
            y0 = max(0, int(min(A[1], B[1], C[1])))
            y1 = min(size - 1, int(max(A[1], B[1], C[1])) + 1)
            den = (B[1] - C[1]) * (A[0] - C[0]) + (C[0] - B[0]) * (A[1] - C[1])
            if den == 0:
                continue
            for y in range(y0, y1 + 1):
                for x in range(x0, x1 + 1):
                    px, py = x + 0.5, y + 0.5
                    l1 = ((B[1] - C[1]) * (px - C[0]) + (C[0] - B[0]) * (py - C[1])) / den
                    l2 = ((C[1] - A[1]) * (px - C[0]) + (A[0] - C[0]) * (py - C[1])) / den
                    l3 = 1 - l1 - l2
                    if l1 < 0 or l2 < 0 or l3 < 0:
                        continue
                    z = l1 * A[2] + l2 * B[2] + l3 * C[2]
                    if z > zb[y * size + x]:
                        zb[y * size + x] = z
                        o = (y * W + vi * size + x) * 3
                        img[o:o + 3] = col
    write_png(path, W, size, img)


def self_test():
    """The checker must catch each defect it claims to: broken copies of a small icosphere."""
    p, t = make_icosphere(1.0, 1)
    cases = [("intact", p, t, set())]
    cases.append(("one triangle removed", p, t[1:], {"closed (no boundary edges)", "genus 0 (Euler 2)"}))
    cases.append(("all reversed", p, [(a, c, b) for (a, b, c) in t], {"outward (volume > 0)"}))
    cases.append(("one triangle reversed", p, [(t[0][0], t[0][2], t[0][1])] + t[1:],
                  {"closed (no boundary edges)", "edge-manifold, consistent"}))
    pushed = list(p)
    pushed[0] = scale(p[0], -1.5)  # out through the far side: its fan pierces that side
    cases.append(("vertex pushed through", pushed, t, {"not self-intersecting"}))
    shifted = [add(v, (0.5, 0.0, 0.0)) for v in p]
    both = p + shifted
    cases.append(("two overlapping spheres", both, t + [(a + len(p), b + len(p), c + len(p)) for (a, b, c) in t],
                  {"one component", "genus 0 (Euler 2)", "not self-intersecting"}))
    apart = [add(v, (2.0 + 1e-9, 0.0, 0.0)) for v in p]
    cases.append(("two spheres, 1e-9 apart", p + apart,
                  t + [(a + len(p), b + len(p), c + len(p)) for (a, b, c) in t],
                  {"one component", "genus 0 (Euler 2)"}))
    flat = list(p)
    a, b, c = t[5]
    flat[c] = scale(add(p[a], p[b]), 0.5)  # a triangle collapsed onto its edge
    cases.append(("collapsed triangle", flat, t, {"no degenerate triangle"}))
    good = True
    for name, pp, tt, expect in cases:
        _, rep, failed = check_mesh(name, pp, tt)
        # the collapsed and pushed cases may trip neighbouring checks too; require the expected ones
        hit = expect <= set(failed) and (expect or not failed)
        if name == "two spheres, 1e-9 apart":
            hit = set(failed) == expect
        print("  self-test %-26s %s (failed: %s)" % (name, "ok" if hit else "WRONG", ", ".join(failed) or "none"))
        good = good and hit
    return good


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", nargs="+", metavar="OBJ", help="only check these OBJ files")
    ap.add_argument("--render", action="store_true", help="also write assets/previews/*.png")
    args = ap.parse_args()
    if args.check:
        all_ok = True
        for path in args.check:
            p, t = read_obj(path)
            ok, rep, _ = check_mesh(path, p, t)
            print("\n".join(rep))
            all_ok = all_ok and ok
        return 0 if all_ok else 1

    print("checker self-test:")
    if not self_test():
        print("checker self-test FAILED")
        return 1
    src_p, src_t = load_npm_bunny(BUNNY_SOURCE)
    src_ok, rep, _ = check_mesh("source " + os.path.relpath(BUNNY_SOURCE, ROOT), src_p, src_t)
    print("\n".join(rep))
    all_ok = src_ok  # the bunny is used as packaged (no closing step), so it must pass as is
    models = [
        ("bunny.obj", make_bunny(), [
            "Stanford bunny (Stanford University Computer Graphics Laboratory), via npm package",
            "bunny 1.0.1 (Mikola Lysenko); see assets/README.md for provenance and terms.",
            "Units metres, +z up, base on z=0, centred in x and y. Made by scripts/make_assets.py."]),
        ("beam.obj", make_beam(), [
            "Beam 1.0 x 0.1 x 0.1 m (x long), centred at the origin, 20x2x2 squares per side.",
            "Made by scripts/make_assets.py; public domain (CC0)."]),
        ("sphere.obj", make_icosphere(), [
            "Icosphere, radius 0.25 m, 3 subdivisions, centred at the origin.",
            "Made by scripts/make_assets.py; public domain (CC0)."]),
    ]
    for name, (p, t), header in models:
        ok, rep, _ = check_mesh(name, p, t)
        print("\n".join(rep))
        all_ok = all_ok and ok
        if ok:
            write_obj(os.path.join(ASSETS, name), p, t, header)
        if args.render:
            os.makedirs(os.path.join(ASSETS, "previews"), exist_ok=True)
            render_views(os.path.join(ASSETS, "previews", name.replace(".obj", ".png")), p, t)
    with open(os.path.join(ASSETS, "default_scene.txt"), "w", newline="\n") as f:
        f.write("bunny.obj\n")
    print("all checks passed" if all_ok else "SOME CHECKS FAILED (failing files were not written)")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
