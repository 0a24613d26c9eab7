"""The per-op differential cases: one small DSL kernel per op (and per layout class where
the op's code depends on the layout), run on the GPU and in the interpreter's
fragment-exact mode on the same inputs (benchmarks/op_diff.py), and built to a cubin in
CI (tests/opdiff/test_cases.py).

Moves, integer ops, comparisons, selects, coordinates and layout conversions must agree
bit for bit; math within the op's stated bound in units in the last place of fp32
(`ULP`), sums within a relative bound (their order of addition differs). The unary math
cases are generated from the op table, so a new op is covered when it is added there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from argus.ir import OPS

HEADER = "from argus.lang import *  # noqa: F401,F403\n"

# fp32 ulp bounds of the device wrappers (argus/codegen/include/argus_math.cuh documents
# each); 0 = correctly rounded like the interpreter's fp32 semantics
# (argus_math.cuh measured them over all fp32 inputs; the cases draw x ~ N(0, 2), so the
# bounds for x >= -10 apply: gelu's erfc and gelu_tanh's e^2u amplify the rounding of their
# argument for negative x, with absolute errors under 4e-7)
ULP = {"neg": 0, "abs": 0, "exp2": 3, "exp": 3, "log": 1, "log2": 1, "sqrt": 0, "rsqrt": 2,
       "tanh": 2, "erf": 2, "sigmoid": 5, "silu": 5, "gelu": 86, "gelu_tanh": 210,
       "div": 0, "add": 0, "sub": 0, "mul": 0, "max": 0, "min": 0}
# the surface call of a unary op when it is not NAME(x)
SURFACE = {"neg": "-{x}", "gelu_tanh": 'gelu({x}, approximate="tanh")'}
POSITIVE = {"log", "log2", "sqrt", "rsqrt"}       # domain: inputs drawn in (0.01, 8)


@dataclass
class Case:
    name: str
    source: str
    kernel: str
    inputs: dict                 # name -> (shape, dtype, domain)
    outputs: dict                # name -> (shape, dtype)
    bound: str = "exact"         # exact | ulp | rel
    tolerance: float = 0.0
    sass: list = field(default_factory=list)   # SASS opcodes the build must contain
    local: bool = False          # may use local memory: a rows(blocked) vector (every row in
                                 # every thread) read at a row that depends on the thread

    def draw(self, rng) -> dict:
        out = {}
        for name, (shape, dtype, domain) in self.inputs.items():
            if dtype == "int32":
                lo, hi = domain if isinstance(domain, tuple) else (0, 64)
                out[name] = rng.integers(lo, hi, size=shape).astype(np.int32)
            elif domain == "positive":
                out[name] = rng.uniform(0.01, 8.0, size=shape).astype(np.float32)
            else:
                out[name] = (rng.standard_normal(shape) * 2).astype(np.float32)
            if dtype in ("bf16", "fp16"):
                out[name] = _round(out[name], dtype)
        return out


def _round(x, dtype):
    """x as the dtype holds it (the interpreter's rounding, one definition)."""
    from argus.interp.machine import round_to_bf16, round_to_fp16
    return (round_to_fp16 if dtype == "fp16" else round_to_bf16)(x)


def _kernel(name, params, body, block=128, grid="(1,)"):
    sig = ", ".join(f"{p}: Tensor[{', '.join(map(repr, s))}, {d}]" for p, (s, d) in params)
    lines = "\n".join("    " + line for line in body)
    return f"{HEADER}\n\n@kernel(grid={grid}, block={block})\ndef {name}({sig}):\n{lines}\n"


def _box(shape):
    return f"({', '.join(map(str, shape))},)" if len(shape) == 1 else str(tuple(shape))


def _zero(shape):
    return "(0,)" if len(shape) == 1 else "(0, 0)"


LAYOUTS = [("blocked", (64, 64)), ("blocked", (64, 8)), ("wgmma_acc_m64n64", (64, 64)),
           ("wgmma_acc_m64n128", (64, 128))]


def _tag(layout, shape):
    return f"{layout.replace('wgmma_', '').replace('_m64', '')}_{shape[1]}"


def unary_cases():
    cases = []
    for spec in OPS.values():
        if spec.family != "math" or spec.cuda is None or len(spec.operands) != 1:
            continue
        name = spec.opcode.split(".", 1)[1]
        call = SURFACE.get(name, name + "({x})")
        for layout, shape in LAYOUTS[:3:2]:
            k = f"unary_{name}_{_tag(layout, shape)}"
            body = [f'x = load(tile(X, {_box(shape)}, {_zero(shape)}), "{layout}")',
                    f"store(tile(Y, {_box(shape)}, {_zero(shape)}), {call.format(x='x')})"]
            cases.append(Case(k, _kernel(k, [("X", (shape, "fp32")), ("Y", (shape, "fp32"))],
                                         body), k,
                              {"X": (shape, "fp32", "positive" if name in POSITIVE else "normal")},
                              {"Y": (shape, "fp32")}, "ulp" if ULP.get(name, 4) else "exact",
                              ULP.get(name, 4)))
    return cases


def binary_cases():
    cases = []
    for spec in OPS.values():
        if spec.family != "math" or spec.cuda is None or len(spec.operands) != 2:
            continue
        name = spec.opcode.split(".", 1)[1]
        expr = {"add": "a + b", "sub": "a - b", "mul": "a * b", "div": "a / b",
                "max": "maximum(a, b)", "min": "minimum(a, b)"}.get(name)
        if expr is None:
            continue
        for layout, shape in LAYOUTS:
            k = f"binary_{name}_{_tag(layout, shape)}"
            rows = f"({shape[0]},)"
            body = [f'a = load(tile(A, {shape}, (0, 0)), "{layout}")',
                    f'b = load(tile(B, {shape}, (0, 0)), "{layout}")',
                    f"store(tile(Y, {shape}, (0, 0)), {expr})",
                    f"store(tile(Z, {shape}, (0, 0)), {expr.replace('b', '1.5')})",
                    f"r = row_max(b)",
                    f"store(tile(W, {shape}, (0, 0)), {expr.replace('b', 'r')})"]
            io = [("A", (shape, "fp32")), ("B", (shape, "fp32")), ("Y", (shape, "fp32")),
                  ("Z", (shape, "fp32")), ("W", (shape, "fp32"))]
            cases.append(Case(k, _kernel(k, io, body), k,
                              {"A": (shape, "fp32", "normal"), "B": (shape, "fp32", "normal")},
                              {n: (shape, "fp32") for n in "YZW"},
                              local=layout == "blocked"))
            del rows
    return cases


def select_cast_coord_cases():
    cases = []
    for layout, shape in LAYOUTS:
        t = _tag(layout, shape)
        k = f"select_cast_coord_{t}"
        body = [f'a = load(tile(A, {shape}, (0, 0)), "{layout}")',
                f'b = load(tile(B, {shape}, (0, 0)), "{layout}")',
                "store(tile(Y, %s, (0, 0)), select(a < b, a, b * 2.0))" % (shape,),
                "store(tile(C, %s, (0, 0)), cast(a, bf16))" % (shape,),
                "store(tile(I, %s, (0, 0)), cast(a * 10.0, int32))" % (shape,),
                "store(tile(R, %s, (0, 0)), cast(row_of(a) * 1000 + col_of(a), int32))" % (shape,),
                "store(tile(F, %s, (0, 0)), cast(cast(a, fp16), fp32) - a)" % (shape,)]
        io = [("A", (shape, "fp32")), ("B", (shape, "fp32")), ("Y", (shape, "fp32")),
              ("C", (shape, "bf16")), ("I", (shape, "int32")), ("R", (shape, "int32")),
              ("F", (shape, "fp32"))]
        cases.append(Case(k, _kernel(k, io, body), k,
                          {"A": (shape, "fp32", "normal"), "B": (shape, "fp32", "normal")},
                          {n: (s, d) for n, (s, d) in io[2:]}))
    return cases


def reduction_cases():
    cases = []
    for layout, shape in LAYOUTS:
        for kind in ("max", "min", "sum"):
            k = f"row_{kind}_{_tag(layout, shape)}"
            body = [f'x = load(tile(X, {shape}, (0, 0)), "{layout}")',
                    f"r = row_{kind}(x)",
                    f"store(tile(R, ({shape[0]},), (0,)), r)",
                    f"store(tile(Y, {shape}, (0, 0)), x - r)"]
            io = [("X", (shape, "fp32")), ("R", ((shape[0],), "fp32")), ("Y", (shape, "fp32"))]
            sass = ["SHFL"] if layout.startswith("wgmma") else ["BAR", "LDS"]
            cases.append(Case(k, _kernel(k, io, body), k, {"X": (shape, "fp32", "normal")},
                              {"R": ((shape[0],), "fp32"), "Y": (shape, "fp32")},
                              "rel" if kind == "sum" else "exact",
                              1e-5 if kind == "sum" else 0.0, sass, local=layout == "blocked"))
    return cases


def convert_cases():
    pairs = [("blocked", "wgmma_acc_m64n64", (64, 64)), ("wgmma_acc_m64n64", "blocked", (64, 64)),
             ("wgmma_acc_m64n128", "blocked", (64, 128)),
             ("wgmma_acc_m64n64", "wgmma_a_rs_16bit", (64, 64))]
    cases = []
    for src, dst, shape in pairs:
        k = f"convert_{_tag(src, shape)}_to_{dst.replace('wgmma_', '')}"
        body = [f'x = load(tile(X, {shape}, (0, 0)), "{src}")',
                f'store(tile(Y, {shape}, (0, 0)), convert_layout(x, "{dst}"))']
        io = [("X", (shape, "bf16")), ("Y", (shape, "bf16"))]
        cases.append(Case(k, _kernel(k, io, body), k, {"X": (shape, "bf16", "normal")},
                          {"Y": (shape, "bf16")}))
    return cases


def scan_index_cases():
    cases = []
    k = "prefix_sum_rows_blocked"
    body = ['x = load(tile(X, (64,), (0,)), "rows(blocked)")',
            "store(tile(Y, (64,), (0,)), prefix_sum(x))"]
    cases.append(Case(k, _kernel(k, [("X", ((64,), "fp32")), ("Y", ((64,), "fp32"))], body), k,
                      {"X": ((64,), "fp32", "normal")}, {"Y": ((64,), "fp32")}, "rel", 1e-5))
    k = "prefix_sum_blocked"
    body = ['x = load(tile(X, (256,), (0,)), "blocked")',
            "store(tile(Y, (256,), (0,)), prefix_sum(x))"]
    cases.append(Case(k, _kernel(k, [("X", ((256,), "fp32")), ("Y", ((256,), "fp32"))], body), k,
                      {"X": ((256,), "fp32", "normal")}, {"Y": ((256,), "fp32")}, "rel", 1e-5,
                      ["BAR"]))
    k = "indices_gather_scatter"
    body = ["cnt = load_indices(tile(C, (8,), (0,)))",
            "offs = prefix_sum(round_up(cnt, 16))",
            'acc = fragment(fp32, (8,), "rows(blocked)", init=0.0)',
            "for e in range(8):",
            "    assign(acc, acc + select(row_of(acc) == e, 1.0, 0.0) * element(offs, e))",
            "store(tile(O, (8,), (0,)), cast(acc, int32))",
            "rows = load_indices(tile(R, (64,), (0,)))",
            'g = gather(X, rows, 1, 32, "blocked")',
            "store(tile(G, (64, 32), (0, 0)), g)",
            'v = load(tile(V, (64,), (0,)), "rows(blocked)")',
            "scatter(S, rows, 0, v)"]
    io = [("C", ((8,), "int32")), ("O", ((8,), "int32")), ("R", ((64,), "int32")),
          ("X", ((100, 64), "fp32")), ("G", ((64, 32), "fp32")), ("V", ((64,), "fp32")),
          ("S", ((100,), "fp32"))]
    cases.append(Case(k, _kernel(k, io, body), k,
                      {"C": ((8,), "int32", (0, 40)), "R": ((64,), "int32", (-3, 103)),
                       "X": ((100, 64), "fp32", "normal"), "V": ((64,), "fp32", "normal")},
                      {"O": ((8,), "int32"), "G": ((64, 32), "fp32"), "S": ((100,), "fp32")},
                      local=True))
    return cases


def memory_cases():
    cases = []
    k = "atomic_add_blocked"
    body = ['x = load(tile(X, (64, 64), (block_id("x"), 0)), "blocked")',
            "atomic_add(tile(Y, (64, 64), (0, 0)), x)"]
    cases.append(Case(k, _kernel(k, [("X", ((256, 64), "fp32")), ("Y", ((64, 64), "fp32"))],
                                 body, grid="(4,)"), k,
                      {"X": ((256, 64), "fp32", "normal"), "Y": ((64, 64), "fp32", "normal")},
                      {"Y": ((64, 64), "fp32")},
                      "rel", 1e-5))
    for dt in ("bf16", "fp16", "int32"):
        k = f"move_{dt}_tails"
        body = ['x = load(tile(X, (64, 64), (block_id("x"), block_id("y"))), "blocked")',
                'store(tile(Y, (64, 64), (block_id("x"), block_id("y"))), x)']
        shape = (100, 72)
        cases.append(Case(k, _kernel(k, [("X", (shape, dt)), ("Y", (shape, dt))], body,
                                     grid="(2, 2)"), k,
                          {"X": (shape, dt, (-1000, 1000) if dt == "int32" else "normal")},
                          {"Y": (shape, dt)}))
    # vector accesses: rows whose pitch breaks 16-byte alignment (every run element by
    # element), a 1-D tail whose last run straddles the end, runs of 4 (a 4-wide tile)
    for dt, shape in (("fp32", (100, 70)), ("bf16", (100, 70)), ("fp16", (77, 68))):
        k = f"move_{dt}_pitch{shape[1]}"
        body = ['x = load(tile(X, (64, 64), (block_id("x"), block_id("y"))), "blocked")',
                'store(tile(Y, (64, 64), (block_id("x"), block_id("y"))), x)']
        cases.append(Case(k, _kernel(k, [("X", (shape, dt)), ("Y", (shape, dt))], body,
                                     grid="(2, 2)"), k,
                          {"X": (shape, dt, "normal")}, {"Y": (shape, dt)}))
    for dt, n in (("fp32", 300), ("bf16", 300), ("int32", 1000)):
        k = f"move_{dt}_1d_tail{n}"
        body = ['x = load(tile(X, (256,), (block_id("x"),)), "blocked")',
                'store(tile(Y, (256,), (block_id("x"),)), x + 1)']
        grid = f"({-(-n // 256)},)"
        cases.append(Case(k, _kernel(k, [("X", ((n,), dt)), ("Y", ((n,), dt))], body,
                                     grid=grid), k,
                          {"X": ((n,), dt, (-1000, 1000) if dt == "int32" else "normal")},
                          {"Y": ((n,), dt)}))
    k = "move_fp32_runs_of_4"
    body = ['x = load(tile(X, (128, 4), (block_id("x"), 0)), "blocked")',
            'store(tile(Y, (128, 4), (block_id("x"), 0)), x * 2.0)']
    cases.append(Case(k, _kernel(k, [("X", ((300, 4), "fp32")), ("Y", ((300, 4), "fp32"))],
                                 body, grid="(3,)"), k,
                      {"X": ((300, 4), "fp32", "normal")}, {"Y": ((300, 4), "fp32")}))
    for num, trans in ((1, False), (2, True), (4, False), (4, True)):
        k = f"matrix_x{num}{'_trans' if trans else ''}"
        rows = 8 * num
        body = [f'x = load(tile(X, ({rows}, 8), (0, 0)), "stmatrix_x{num}{"_trans" if trans else ""}")',
                f"s = smem(bf16, ({rows}, 8))",
                f"stmatrix(s[0], x, num={num}, trans={trans})",
                "sync_block()",
                f"y = ldmatrix(s[0], num={num}, trans={trans})",
                f"store(tile(Y, ({rows}, 8), (0, 0)), y)"]
        cases.append(Case(k, _kernel(k, [("X", ((rows, 8), "bf16")), ("Y", ((rows, 8), "bf16"))],
                                     body), k, {"X": ((rows, 8), "bf16", "normal")},
                          {"Y": ((rows, 8), "bf16")}, sass=["LDSM", "STSM"]))
    return cases


POISON = -12345.0        # outputs start here (an element neither side writes stays equal)


def poisoned(case: Case, arrays: dict) -> dict:
    """The inputs plus every output not also an input, filled with POISON."""
    out = dict(arrays)
    for name, (shape, dtype) in case.outputs.items():
        if name not in case.inputs:
            out[name] = np.full(shape, POISON, np.int32 if dtype == "int32" else np.float32)
    return out


def scalar_cases():
    """Uniform scalar arithmetic (the arith family) on a size and the block index, stored
    through a fragment; the comparisons and logic steer an if."""
    k = "scalar_arith"
    body = ['x = load(tile(X, (64,), (0,)), "rows(blocked)")',
            'b = block_id("x")',
            "a = ((N << 2) >> 1) + minimum(N, 5) * maximum(b, 2) - (N | 3) ^ (b & 1)",
            "q = -a // 7 + a % 5",
            "store(tile(Y, (64,), (b,)), x * 0.0 + a + q)",
            "if (N < 1000 and N >= 3) or not (N != 64):",
            "    store(tile(Z, (64,), (b,)), x + 1.0)",
            "if N > 100000 or b > 1:",
            "    store(tile(Z, (64,), (b,)), x - 1.0)"]
    io = [("X", (("N",), "fp32")), ("Y", ((128,), "fp32")), ("Z", ((128,), "fp32"))]
    return [Case(k, _kernel(k, io, body, grid="(2,)"), k, {"X": ((100,), "fp32", "normal")},
                 {"Y": ((128,), "fp32"), "Z": ((128,), "fp32")})]


def all_cases() -> list[Case]:
    return (scalar_cases() + unary_cases() + binary_cases() + select_cast_coord_cases() + reduction_cases()
            + convert_cases() + scan_index_cases() + memory_cases())


def ulp_distance(a, b) -> np.ndarray:
    """|a - b| in units in the last place of fp32 (NaN against anything: infinite)."""
    a = np.asarray(a, np.float32).ravel()
    b = np.asarray(b, np.float32).ravel()

    def ordered(x):
        i = x.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    d = np.abs(ordered(a) - ordered(b)).astype(np.float64)
    return np.where(np.isnan(a) | np.isnan(b), np.inf, d)


def judge(case: Case, got: dict, want: dict) -> dict:
    """Compare the GPU's outputs with the interpreter's: a row of the results JSON."""
    worst, ok = 0.0, True
    for name in case.outputs:
        g, w = np.asarray(got[name]), np.asarray(want[name])
        if g.shape != w.shape:
            return {"ok": False, "why": f"{name}: shape {g.shape} vs {w.shape}"}
        if case.bound == "rel":
            gf, wf = g.astype(np.float64), w.astype(np.float64)
            err = np.abs(gf - wf) / max(1e-30, float(np.max(np.abs(wf))))
            err = np.where(np.isnan(gf) | np.isnan(wf), np.inf, err)
            value = float(err.max()) if err.size else 0.0
        elif np.issubdtype(w.dtype, np.integer):
            value = float(np.max(np.abs(g.astype(np.int64) - w.astype(np.int64)), initial=0))
        else:
            value = float(ulp_distance(g, w).max(initial=0))
        worst = max(worst, value)
        ok &= value <= (case.tolerance if case.bound != "exact" else 0.0)
    return {"ok": bool(ok), "bound": case.bound, "tolerance": case.tolerance, "worst": worst}
