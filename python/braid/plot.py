"""Plans as pictures: braid's HOP explain text drawn as SVG, without
Graphviz. One panel per DAG (statement block), laid out top to bottom:
inputs on top, every operator one row below its lowest input, writes at
the bottom; each box shows the operator, its variable or value, its size
[rows, cols, non-zeros] and memory estimate; fused operators (spoof*)
are orange, inputs blue, literals grey."""
import html
import re
from typing import Dict, List, Tuple

# "(id) op [name] (arg ids) [rows,cols,nnz] mem exec": the first
# parenthesis holding only ids ends the head (ua(sum) holds letters)
_NODE = re.compile(r"^\s*\((\d+)\) (.*?)\s*\(([\d,-]*)\)\s*(\[[^\]]*\])?\s*(\S*)")
_WRITE = re.compile(r"^\s*TWrite (\S+) \((\d+)\)")


def parse(text: str, functions: bool = False) -> List[Tuple[str, Dict[str, dict], List[Tuple[str, str]]]]:
    """The DAGs of explain text: (title, {id: node}, [(variable, id)
    written]); those of functions ("--FUNCTION ...", or recompiled DAGs
    of other files than the program's "<script>") only when asked."""
    dags, section, title, nodes, writes = [], "", "", {}, []
    for line in text.splitlines():
        m = _NODE.match(line)
        w = _WRITE.match(line)
        if (m or w) and section.startswith("FUNCTION") and not functions:
            continue
        if m:
            op, _, name = m.group(2).partition(" ")
            nodes[m.group(1)] = {"op": op, "name": name.strip(), "size": m.group(4) or "", "mem": m.group(5),
                                 "args": [a for a in m.group(3).split(",") if a.isdigit()]}
        elif w:
            writes.append((w.group(1), w.group(2)))
        elif line.strip() and not line.startswith("#"):
            if nodes or writes:
                dags.append((title, nodes, writes))
                nodes, writes = {}, []
            if line.startswith("--"):
                section = line[2:].split(" [")[0].strip()
            elif line.startswith("RECOMPILED DAG ("):
                # recompile_hops: a block of another file than the
                # program's text is a (library) function's
                section = "" if line.startswith("RECOMPILED DAG (<script>:") else "FUNCTION (recompiled)"
                title = line.strip().rstrip(":")
            else:
                title = (section + ": " if section and section != "MAIN PROGRAM" else "") + line.strip().rstrip(":")
    if nodes or writes:
        dags.append((title, nodes, writes))
    return dags


def _level(k: str, nodes: Dict[str, dict], level: Dict[str, int]) -> int:
    """1 + the deepest input's row (inputs: row 0), without recursion."""
    stack = [k]
    while stack:
        top = stack[-1]
        todo = [a for a in nodes[top]["args"] if a in nodes and a not in level]
        if todo:
            stack.extend(todo)
            continue
        stack.pop()
        level[top] = 1 + max([level[a] for a in nodes[top]["args"] if a in nodes], default=-1)
    return level[k]


def _fill(op: str) -> str:
    if op.startswith("spoof"):
        return "#f8b878"
    if op == "TRead":
        return "#b8d4f0"
    if op == "LIT":
        return "#e4e4e4"
    return "#ffffff"


def svg(text: str, literals: bool = False, functions: bool = False) -> str:
    """SVG of the DAGs in explain text (literals: draw LIT nodes too;
    functions: the DAGs of the functions too, after the main program's)."""
    W, H, GAP, X0 = 150, 38, 26, 10
    parts, y, width = [], 10, 300
    for title, nodes, writes in parse(text, functions):
        shown = {k: n for k, n in nodes.items() if literals or n["op"] != "LIT"}
        level: Dict[str, int] = {}
        for k in shown:
            _level(k, shown, level)
        rows: Dict[int, List[str]] = {}
        for k, lv in level.items():
            rows.setdefault(lv, []).append(k)
        parts.append(f'<text x="{X0}" y="{y + 14}" font-weight="bold">{html.escape(title)}</text>')
        y += 24
        pos = {}
        for lv in sorted(rows):
            for i, k in enumerate(rows[lv]):
                pos[k] = (X0 + i * (W + GAP), y + lv * (H + GAP))
        for k, (x, yy) in pos.items():        # edges first, under the boxes
            for a in shown[k]["args"]:
                if a in pos:
                    ax, ay = pos[a]
                    parts.append(f'<line x1="{ax + W / 2}" y1="{ay + H}" x2="{x + W / 2}" y2="{yy}" '
                                 f'stroke="#666" marker-end="url(#arrow)"/>')
        for k, (x, yy) in pos.items():
            n = shown[k]
            label = f"{n['op']} {n['name']}".strip()
            parts.append(f'<rect x="{x}" y="{yy}" width="{W}" height="{H}" rx="5" fill="{_fill(n["op"])}" '
                         f'stroke="#333"><title>({k}) {html.escape(label)} {html.escape(n["size"])} '
                         f'{html.escape(n["mem"])}</title></rect>')
            parts.append(f'<text x="{x + W / 2}" y="{yy + 15}" text-anchor="middle">{html.escape(label[:22])}</text>')
            parts.append(f'<text x="{x + W / 2}" y="{yy + 30}" text-anchor="middle" font-size="10">'
                         f'{html.escape(n["size"])} {html.escape(n["mem"].split("/")[-1])}</text>')
            width = max(width, x + W + X0)
        y += (max(rows, default=0) + 1) * (H + GAP)
        wx = X0
        for var, k in writes:
            if k in pos:
                parts.append(f'<line x1="{pos[k][0] + W / 2}" y1="{pos[k][1] + H}" x2="{wx + 40}" y2="{y}" '
                             f'stroke="#666" stroke-dasharray="4"/>')
            parts.append(f'<text x="{wx}" y="{y + 14}">&#8594; {html.escape(var)}</text>')
            wx += 90
        y += 30
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" font-family="sans-serif" '
            f'font-size="12"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" '
            f'markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#666"/></marker></defs>')
    return head + "".join(parts) + "</svg>"
