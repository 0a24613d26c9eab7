"""Replace top-level functions of a module by those of the same name in another file, in
place, for a device-side A/B of one function (scripts/device_attention_fold_ab.sh):

    python3 scripts/ab/splice.py argus/codegen/lower/exchange.py scripts/ab/fold4.py
"""
import ast
import sys


def functions(text):
    return {n.name: (n.lineno, n.end_lineno) for n in ast.parse(text).body
            if isinstance(n, ast.FunctionDef)}


def main(target, donor):
    text, extra = open(target).read(), open(donor).read()
    lines, donor_lines = text.splitlines(), extra.splitlines()
    have, new = functions(text), functions(extra)
    missing = sorted(set(new) - set(have))
    if missing:
        sys.exit(f"splice: {target} has no function {', '.join(missing)}")
    for name, (a, b) in sorted(new.items(), key=lambda kv: -have[kv[0]][0]):
        lo, hi = have[name]
        lines[lo - 1:hi] = donor_lines[a - 1:b]
    open(target, "w").write("\n".join(lines) + "\n")
    print(f"splice: {', '.join(new)} of {donor} into {target}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
