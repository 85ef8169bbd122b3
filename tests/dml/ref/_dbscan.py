"""SystemDS's DBSCAN rule in plain Python, shared by ref/alg_dbscan.py and
ref/alg_outlierbydb.py (not a case).

Rows i != j are neighbours when their distance is <= eps (identical rows
included); a row with >= minPts - 1 neighbours is a core point; every core
point links to its neighbours, except that a non-core row reached by
several core points links only to the first of them; clusters are the
connected components of these links, each named by its largest row number
(1-based), and rows without links are noise (0).
"""
import math


def read_csv(path):
    with open(path) as f:
        return [[float(v) for v in line.split(",")] for line in f if line.strip()]


def dbscan(X, eps, min_pts):
    n = len(X)
    near = [[j for j in range(n) if j != i and math.dist(X[i], X[j]) <= eps]
            for i in range(n)]
    core = [len(near[i]) + 1 >= min_pts for i in range(n)]
    links = [set() for _ in range(n)]
    for j in range(n):
        cores = [i for i in near[j] if core[i]]
        if not core[j] and len(cores) > 1:
            cores = cores[:1]
        for i in cores:
            links[i].add(j)
            links[j].add(i)
    label = [0] * n
    for s in range(n):
        if label[s] or not links[s]:
            continue
        comp, stack = {s}, [s]
        while stack:
            for q in links[stack.pop()]:
                if q not in comp:
                    comp.add(q)
                    stack.append(q)
        top = max(comp) + 1
        for q in comp:
            label[q] = top
    return label, sum(1 for v in label if v > 0)
