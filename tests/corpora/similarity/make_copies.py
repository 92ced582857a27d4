"""How copies/*_{renamed,reformatted,commented,reordered,dead_code,all_disguises}.py were made
(random.seed(7)): python make_copies.py SOURCE TAG copies/.  Not a test; kept so the set can be
remade or extended."""
import ast, sys, random, keyword, builtins
from pathlib import Path

KEEP = set(dir(builtins)) | set(keyword.kwlist) | {"math", "pipeline_capacity", "transfer_ledger", "evaluate_topology", "max_exposed_s_per_s", "annotations", "Any", "Mapping", "Sequence", "Iterable", "Dict", "List"}

class Rename(ast.NodeTransformer):
    def __init__(self): self.map = {}
    def new(self, n):
        if n in KEEP or n.startswith("__"): return n
        return self.map.setdefault(n, f"{random.choice(['val','tmp','x','item','thing','q'])}_{len(self.map)}")
    def visit_Name(self, node): node.id = self.new(node.id); return node
    def visit_arg(self, node): node.arg = self.new(node.arg); return node
    def visit_FunctionDef(self, node):
        node.name = self.new(node.name); self.generic_visit(node); return node

def rename(src):
    t = ast.parse(src); Rename().visit(t); return ast.unparse(t)

def reformat(src):
    # ast.unparse: one statement per line, its own quoting and spacing; then 2-space indents
    out = ast.unparse(ast.parse(src))
    return "\n".join(l.replace("    ", "  ") for l in out.splitlines()).replace("'", '"') + "\n"

def comment(src):
    lines = []
    for i, l in enumerate(src.splitlines()):
        ind = l[: len(l) - len(l.lstrip())]
        if l.strip() and i % 3 == 0:
            lines.append(f"{ind}# step {i}: work out the next value carefully")
        lines.append(l + ("  # my own logic" if l.strip() and i % 5 == 0 and not l.rstrip().endswith(("(", "[", "{", ",", "\\")) else ""))
    return "\n".join(lines) + "\n"

def reorder(src):
    t = ast.parse(src); body = list(t.body)
    funcs = [n for n in body if isinstance(n, ast.FunctionDef)]
    rest = [n for n in body if not isinstance(n, ast.FunctionDef)]
    t.body = rest + list(reversed(funcs)); return ast.unparse(t) + "\n"

DEAD = '''

def _unused_helper_{n}(values, scale=2):
    """Left over from an earlier attempt."""
    total = 0
    for index, value in enumerate(values):
        if index % scale == 0:
            total += value * scale
        else:
            total -= value
    return total


DEBUG_{n} = False
if DEBUG_{n}:
    print("debugging the ledger", _unused_helper_{n}([1, 2, 3]))
'''

def dead(src):
    t = ast.parse(src)
    for node in t.body:
        if isinstance(node, ast.FunctionDef):
            node.body.insert(1, ast.parse("if False:\n    print('never runs')\n    unused = [i * i for i in range(10)]").body[0])
    return ast.unparse(t) + "\n" + "".join(DEAD.format(n=i) for i in range(3))

OPS = {"renamed": rename, "reformatted": reformat, "commented": comment, "reordered": reorder, "dead_code": dead}
if __name__ == "__main__":
    random.seed(7)
    src = Path(sys.argv[1]).read_text(); tag = sys.argv[2]; outdir = Path(sys.argv[3])
    for name, op in OPS.items():
        (outdir / f"{tag}_{name}.py").write_text(op(src))
    all_ = comment(dead(reorder(reformat(rename(src)))))
    (outdir / f"{tag}_all_disguises.py").write_text(all_)
