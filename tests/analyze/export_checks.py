#!/usr/bin/python3
"""make test-exports: checks of hvt's speedscope files (Debian's python3 and python3-jsonschema).
  export_checks.py speedscope FILE SCHEMA FOLDED   FILE validates against speedscope's own
      published schema (the copy its npm package ships), and its samples and weights, folded
      back, are exactly FOLDED (hvt's folded stacks); a copy with one field broken must fail
      the same validation (the schema is really applied).
  export_checks.py ctf-insns BT LIST   babeltrace2's "insn" events (BT: its text output with
      --clock-cycles) are, CPU by CPU and in order, the instructions of hvt's listing LIST
      (time stamp and address).
Prints PASS/FAIL lines; exits 1 when one failed."""
import copy
import json
import sys

import jsonschema


failed = 0


def check(ok, what):
    global failed
    failed += not ok
    print(("PASS " if ok else "FAIL ") + what)


def speedscope(path, schema_path, folded_path):
    doc = json.load(open(path))
    schema = json.load(open(schema_path))
    try:
        jsonschema.validate(doc, schema)
        err = None
    except jsonschema.ValidationError as e:
        err = e.message
    check(err is None, f"speedscope file validates against speedscope's schema ({err or 'no error'})")
    broken = copy.deepcopy(doc)
    broken["profiles"][0]["type"] = "sampledx"
    try:
        jsonschema.validate(broken, schema)
        rejected = False
    except jsonschema.ValidationError:
        rejected = True
    check(rejected, "the schema rejects a copy whose profile type is broken")
    frames = [f["name"] for f in doc["shared"]["frames"]]
    prof = doc["profiles"][0]
    got = {}
    for stack, w in zip(prof["samples"], prof["weights"]):
        key = ";".join(frames[i] for i in stack)
        got[key] = got.get(key, 0) + w
    want = {}
    for line in open(folded_path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        want[stack] = want.get(stack, 0) + int(n)
    check(got == want, f"speedscope samples x weights = hvt's folded stacks ({len(got)} stacks, "
                       f"{sum(got.values())} vs {sum(want.values())})")
    check(prof["endValue"] == sum(prof["weights"]), "endValue is the total weight")


def ctf_insns(bt_path, list_path):
    got, want = {}, {}
    for line in open(bt_path):
        if ") insn: " not in line:
            continue
        ts = int(line[1:line.index("]")])
        cpu = int(line.split("cpu_id = ")[1].split(" ")[0])
        addr = int(line.split("addr = ")[1].split(",")[0])
        got.setdefault(cpu, []).append((ts, addr))
    for line in open(list_path):
        if line.startswith("#"):
            continue
        f = line.split()
        want.setdefault(int(f[1]), []).append((int(f[0]), int(f[3], 16)))
    n = sum(len(v) for v in want.values())
    check(got == want and n > 0, f"babeltrace2's insn events are the listing's instructions, per CPU in order "
                                 f"(time stamp, address: {n} on {len(want)} CPUs)")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "speedscope":
        speedscope(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "ctf-insns":
        ctf_insns(*sys.argv[2:])
    else:
        sys.exit(__doc__)
    sys.exit(1 if failed else 0)
