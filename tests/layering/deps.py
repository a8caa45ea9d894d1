#!/usr/bin/env python3
"""deps.py [--no-cross-layer] OBJ... - the link-time dependency graph of the hypervisor's
objects and its cycles.

An object depends on another when it references a symbol the other defines (weak references
count: they are dependencies too, only hidden). Prints every strongly connected component of
more than one object (a dependency cycle), largest first, then 'cycles=N largest=M'.
--no-cross-layer: exit 1 when a cycle joins objects of different layers (top folders: vmm/,
trace/, net/, hv/): the layers must depend one way. --no-cycles: exit 1 on any cycle.
--unit A.o+B.o: A.o and B.o are one module split in two files (one pass whose parts recurse
into each other): they count as one node, so only cycles through other files are found.
"""
import subprocess, sys, collections

def symbols(obj):
    out = subprocess.run(['nm', obj], capture_output=True, text=True, check=True).stdout
    defs, weak, refs = set(), set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ('U', 'w', 'v'):
            refs.add(parts[1])
        elif len(parts) == 3 and parts[1] in 'TDBRC':
            defs.add(parts[2])
        elif len(parts) == 3 and parts[1] in 'VW':
            weak.add(parts[2])        # a weak default: the strong definition elsewhere wins
        elif len(parts) == 3 and parts[1] in 'vw':
            refs.add(parts[2])
    return defs, weak, refs

def sccs(nodes, edges):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1
        stack.append(v); on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            out.append(comp)
    for v in nodes:
        if v not in index:
            visit(v)
    return out

def main(objs, units=()):
    owner, weak_owner, refs = {}, {}, {}
    same = {}
    for u in units:
        for o in u[1:]:
            same[o] = u[0]
    for o in objs:
        d, w, r = symbols(o)
        for s in d:
            owner.setdefault(s, o)
        for s in w:
            weak_owner.setdefault(s, o)
            refs.setdefault(o, set())
        refs[o] = r | w
    for s, o in weak_owner.items():
        owner.setdefault(s, o)
    edges = collections.defaultdict(set)
    for o in objs:
        for s in refs[o]:
            if s in owner and same.get(owner[s], owner[s]) != same.get(o, o):
                edges[same.get(o, o)].add(same.get(owner[s], owner[s]))
    objs = [o for o in objs if o not in same]
    cycles = sorted((c for c in sccs(objs, edges) if len(c) > 1), key=len, reverse=True)
    for c in cycles:
        print(f'cycle of {len(c)}: ' + ' '.join(sorted(c)))
    print(f'cycles={len(cycles)} largest={len(cycles[0]) if cycles else 0}')
    return cycles

def layer(obj):
    parts = obj.replace('\\', '/').split('/')
    for top in ('vmm', 'trace', 'net', 'hv'):
        if top in parts:
            return top
    return parts[0]

if __name__ == '__main__':
    args = sys.argv[1:]
    strict = '--no-cross-layer' in args or '--no-cycles' in args
    units = [args[i + 1].split('+') for i, a in enumerate(args) if a == '--unit']
    skip = {i + 1 for i, a in enumerate(args) if a == '--unit'}
    cycles = main([a for i, a in enumerate(args) if not a.startswith('--') and i not in skip], units)
    cross = [c for c in cycles if len({layer(o) for o in c}) > 1 or '--no-cycles' in args]
    for c in cross:
        print('cross-layer cycle: ' + ' '.join(sorted(c)))
    if strict:
        print(f"{'0' if cross else '1'} passed, {len(cross) and 1} failed")
        sys.exit(1 if cross else 0)
