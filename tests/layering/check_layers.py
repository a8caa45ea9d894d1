#!/usr/bin/env python3
"""check_layers.py - the hypervisor's layering rules, checked on the source tree and the objects.

usage: check_layers.py [--root DIR] [--objs DIR] [--selftest]

Rules (docs/hypervisor.md, "Layers"):
  1. vmm/ names none of its users: no vmm/ object references or defines a symbol of the layers
     above it (trace_, net_, step_, sink_, probe_, stream_, ... prefixes) and none uses weak
     symbols (a weak reference is a hidden upward call).
  2. The layers above vmm/ (trace/, net/, hv/) include only vmm/'s public headers
     (vmm/include/): no header that exists only among vmm/'s internals, no path into vmm/.
  3. No hand-written constant in the assembly: a %define/equ of a number in a .asm whose name
     is also defined in C (a #define or an enumerator in include/, vmm/, trace/, net/, hv/, or
     a generated *_asm.inc) is a copy that can drift; such constants must come from the
     generated includes (vmm/include/hv_asm.h).
--selftest plants one violation of each rule in a copy of the tree (and a forged object) and
checks that each is caught. Prints one line per finding, then 'N passed, N failed'.
"""
import os, re, shutil, subprocess, sys, tempfile

UPPER_PREFIXES = ('trace_', 'net_', 'step_', 'sink_', 'probe_', 'stream_', 'codedict_',
                  'dilate_', 'trigger_', 'task_', 'kaslr_', 'e1000_', 'coll_')
LAYERS_ABOVE = ('trace', 'net', 'hv')
TRACE_DIRS = ('trace', 'trace/step', 'trace/x86', 'trace/probe', 'trace/dvm')
C_DIRS = ('include', 'vmm', 'vmm/include', 'vmm/lib') + TRACE_DIRS + ('net', 'hv')
NUM = r'(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*'


def nm(path):
    out = subprocess.run(['nm', path], capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        p = line.split()
        if len(p) == 2:
            syms.append((p[0], p[1]))
        elif len(p) == 3:
            syms.append((p[1], p[2]))
    return syms


def rule_vmm_names_no_user(objdir):
    bad = []
    vmm = os.path.join(objdir, 'vmm')
    if not os.path.isdir(vmm):
        return [f'rule 1: no vmm/ objects under {objdir} (build first)']
    for dp, _, files in os.walk(vmm):
        for f in sorted(files):
            if not f.endswith('.o'):
                continue
            path = os.path.join(dp, f)
            for kind, sym in nm(path):
                if kind in 'wWvV':
                    bad.append(f'rule 1: {path}: weak symbol {sym} ({kind})')
                elif sym.startswith(UPPER_PREFIXES):
                    bad.append(f'rule 1: {path}: names {sym} of a layer above vmm/ ({kind})')
    return bad


def internal_headers(root):
    names = set()
    for d in ('vmm', 'vmm/lib'):
        for f in os.listdir(os.path.join(root, d)):
            if f.endswith('.h'):
                names.add(f)
    pub = os.path.join(root, 'vmm/include')
    public = set(f for f in os.listdir(pub) if f.endswith('.h')) if os.path.isdir(pub) else set()
    return names - public


def rule_public_includes(root):
    bad = []
    internal = internal_headers(root)
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    for layer in LAYERS_ABOVE:
        for dp, dirs, files in os.walk(os.path.join(root, layer)):
            for f in sorted(files):
                if not f.endswith(('.c', '.h')):
                    continue
                path = os.path.join(dp, f)
                text = open(path, errors='replace').read()
                for m in inc.finditer(text):
                    name = m.group(1)
                    line = text.count('\n', 0, m.start()) + 1
                    rel = os.path.relpath(path, root)
                    if 'vmm/' in name or name.startswith('..'):
                        bad.append(f'rule 2: {rel}:{line}: includes "{name}" by path')
                    elif os.path.basename(name) in internal:
                        bad.append(f'rule 2: {rel}:{line}: includes vmm/ internal header "{name}"')
    return bad


def c_constants(root, gen_dirs):
    """name -> value text of every #define NAME <number> and enumerator NAME = <number>."""
    consts = {}
    define = re.compile(r'^\s*#\s*define\s+([A-Za-z_]\w*)\s+\(?\s*(' + NUM + r')\s*\)?\s*(?:/[/*].*)?$', re.M)
    enum_eq = re.compile(r'\b([A-Z_][A-Z0-9_]*)\s*=\s*(' + NUM + r')\b')
    enum_block = re.compile(r'\benum\b[^{;]*\{([^}]*)\}', re.S)
    for d in C_DIRS:
        full = os.path.join(root, d)
        if not os.path.isdir(full):
            continue
        for f in os.listdir(full):
            if not f.endswith(('.c', '.h')):
                continue
            text = open(os.path.join(full, f), errors='replace').read()
            for m in define.finditer(text):
                consts.setdefault(m.group(1), m.group(2))
            for b in enum_block.finditer(text):
                body = re.sub(r'/\*.*?\*/', '', b.group(1), flags=re.S)
                for m in enum_eq.finditer(body):
                    consts.setdefault(m.group(1), m.group(2))
                # implicit enumerators (FD_LEFT, FD_CR3, ...): counted from the last value
                val = -1
                for item in body.split(','):
                    item = item.strip()
                    if not item:
                        continue
                    mm = re.match(r'([A-Za-z_]\w*)\s*(?:=\s*(' + NUM + r'))?$', item)
                    if not mm:
                        val = None
                        continue
                    if mm.group(2):
                        val = int(mm.group(2).rstrip('uUlL'), 0)
                    elif val is not None:
                        val += 1
                    if val is not None:
                        consts.setdefault(mm.group(1), str(val))
    for gd in gen_dirs:
        for dp, _, files in os.walk(gd):
            for f in files:
                if f.endswith('.inc'):
                    for line in open(os.path.join(dp, f)):
                        m = re.match(r'%define\s+(\w+)\s+(-?\d+)', line)
                        if m:
                            consts.setdefault(m.group(1), m.group(2))
    return consts


def rule_asm_constants(root, gen_dirs):
    bad = []
    consts = c_constants(root, gen_dirs)
    asm_def = re.compile(r'^\s*(?:%define\s+(\w+)\s+(' + NUM + r')\b|(\w+)\s+equ\s+(' + NUM + r')\b)', re.M)
    for d in ('vmm',) + TRACE_DIRS + ('net', 'trace/step/tests'):
        full = os.path.join(root, d)
        for f in sorted(os.listdir(full)) if os.path.isdir(full) else []:
            if not f.endswith('.asm'):
                continue
            text = open(os.path.join(full, f), errors='replace').read()
            for m in asm_def.finditer(text):
                name = m.group(1) or m.group(3)
                val = m.group(2) or m.group(4)
                line = text.count('\n', 0, m.start()) + 1
                if name in consts:
                    same = int(val.rstrip('uUlL'), 0) == int(consts[name].rstrip('uUlL'), 0)
                    bad.append(f'rule 3: {d}/{f}:{line}: {name} = {val} is written by hand; C has '
                               f'{consts[name]}{"" if same else " (they differ)"}: generate it')
    return bad


def check(root, objdir, gen_dirs):
    return rule_vmm_names_no_user(objdir) + rule_public_includes(root) + \
        rule_asm_constants(root, gen_dirs)


def selftest(root, objdir, gen_dirs):
    passed = failed = 0
    def expect(name, findings, rule):
        nonlocal passed, failed
        hit = [f for f in findings if f.startswith(rule)]
        if hit:
            passed += 1
            print(f'selftest {name}: caught: {hit[0]}')
        else:
            failed += 1
            print(f'selftest {name}: NOT caught')
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, 'tree')
        shutil.copytree(root, tree, ignore=shutil.ignore_patterns('build', 'build-*', '.git'))
        # rule 2: trace/ reaches a vmm/ internal header
        with open(os.path.join(tree, 'trace/step/step.c'), 'a') as fh:
            fh.write('\n#include "hv_core.h"\n')
        # rule 3: a constant copied by hand into the assembly, with a wrong value
        with open(os.path.join(tree, 'trace/step/step_fast.asm'), 'a') as fh:
            fh.write('\n%define HVT_PRED_SLOTS 2048\n')
        # rule 1: a vmm/ object that calls up into trace/ through a weak symbol
        objs = os.path.join(tmp, 'objs')
        os.makedirs(os.path.join(objs, 'vmm'))
        src = os.path.join(tmp, 'up.c')
        with open(src, 'w') as fh:
            fh.write('__attribute__((weak)) int trace_layer_init(void);\n'
                     'int up(void) { return trace_layer_init ? trace_layer_init() : 0; }\n')
        subprocess.run(['cc', '-c', src, '-o', os.path.join(objs, 'vmm', 'up.o')], check=True)
        expect('vmm-calls-up', rule_vmm_names_no_user(objs), 'rule 1')
        expect('internal-include', rule_public_includes(tree), 'rule 2')
        expect('asm-copy', rule_asm_constants(tree, gen_dirs), 'rule 3')
    return passed, failed


def main():
    args = sys.argv[1:]
    root = '.'
    objdir = 'build/hv'
    if '--root' in args:
        root = args[args.index('--root') + 1]
    if '--objs' in args:
        objdir = args[args.index('--objs') + 1]
    gen_dirs = [os.path.join(objdir, 'gen')]
    if '--selftest' in args:
        p, f = selftest(root, objdir, gen_dirs)
    else:
        findings = check(root, objdir, gen_dirs)
        for x in findings:
            print(x)
        p, f = (0, len(findings)) if findings else (3, 0)
        if not findings:
            print('layers: vmm/ names no user, the layers above it use vmm/include/ only, '
                  'the assembly copies no constant')
    print(f'{p} passed, {f} failed')
    sys.exit(1 if f else 0)


if __name__ == '__main__':
    main()
