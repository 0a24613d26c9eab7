"""Decode the raw dump of hopper_probe.cu into tests/layout/data/hopper_probe.json.

The probe fills every input with values that encode their own index and poisons
every output first; this module turns raw registers and shared-memory images back
into "which (row, col) did thread t, value v hold" tables. It refuses to write a
table when any value is still a poison, out of range, not an exact integer, or
claimed twice: a wrong table here would silently mislead every layout test.

Usage:
  python3 tests/hardware/probe_to_json.py RAW.json OUT.json \
      [--driver STR] [--nvcc STR] [--command STR] [--date STR]
"""
from __future__ import annotations

import argparse
import datetime
import json
import sys
from typing import Hashable, Sequence

ACCUMULATOR_WIDTHS = tuple(range(8, 257, 8))
GLOBAL_POISON_F32 = -1.0
REGISTER_POISON_F32 = -2.0
LDMATRIX_COUNTS = {"x1": 1, "x2": 2, "x4": 4, "x1_trans": 1, "x2_trans": 2, "x4_trans": 4}
TMA_SWIZZLES = ("128B", "64B", "32B", "none")


class ProbeDecodeError(ValueError):
    """A raw probe value that cannot be trusted (poisoned, out of range, duplicated)."""


def _exact_int(value: float, where: str) -> int:
    if value == GLOBAL_POISON_F32:
        raise ProbeDecodeError(f"{where}: still the output poison -1; the kernel never stored it")
    if value == REGISTER_POISON_F32:
        raise ProbeDecodeError(f"{where}: still the register poison -2; the instruction never wrote it")
    if not isinstance(value, (int, float)) or value != value or int(value) != value or value < 0:
        raise ProbeDecodeError(f"{where}: {value!r} is not a non-negative exact integer")
    return int(value)


def _invert(owners: dict[Hashable, Hashable], domain: Sequence[Hashable], what: str) -> dict:
    """owners maps position -> owner; check it is a bijection onto `domain` and invert it."""
    inverse: dict = {}
    for position, owner in owners.items():
        if owner in inverse:
            raise ProbeDecodeError(
                f"{what}: {owner} claimed by both {inverse[owner]} and {position}; ambiguous"
            )
        inverse[owner] = position
    expected = set(domain)
    missing = [d for d in domain if d not in inverse]
    extra = [o for o in inverse if o not in expected]
    if missing or extra:
        raise ProbeDecodeError(f"{what}: missing {missing[:4]}, unexpected {extra[:4]}")
    return inverse


def decode_accumulator(raw: Sequence[Sequence[float]], n: int) -> list:
    """wgmma m64nNk16 D registers holding n + 256 m -> [[row, col] per v] per thread."""
    if len(raw) != 128 or any(len(r) != n // 2 for r in raw):
        raise ProbeDecodeError(f"accumulator N={n}: expected 128 threads x {n // 2} registers")
    table, claims = [], {}
    for t, regs in enumerate(raw):
        row_out = []
        for v, value in enumerate(regs):
            code = _exact_int(value, f"accumulator N={n} thread {t} register {v}")
            row, col = divmod(code, 256)
            if row >= 64 or col >= n:
                raise ProbeDecodeError(f"accumulator N={n} thread {t} register {v}: {code} outside 64x{n}")
            claims[(t, v)] = (row, col)
            row_out.append([row, col])
        table.append(row_out)
    _invert(claims, [(r, c) for r in range(64) for c in range(n)], f"accumulator N={n}")
    return table


def _matrix_from_accumulator(raw: Sequence[Sequence[float]], acc: list, where: str) -> dict:
    """Place D registers at their (row, col) through a measured accumulator table."""
    values = {}
    for t, regs in enumerate(raw):
        for v, value in enumerate(regs):
            row, col = acc[t][v]
            values[(row, col)] = _exact_int(value, f"{where} thread {t} register {v}")
    return values


def decode_a_register_16bit(raw_t: Sequence, raw_v: Sequence, acc16: list) -> list:
    """RS bf16 (B = I, N=16): D[row, k] = t+1 in one run, v+1 in the other."""
    owner_t = _matrix_from_accumulator(raw_t, acc16, "a_register_16bit t-run")
    owner_v = _matrix_from_accumulator(raw_v, acc16, "a_register_16bit v-run")
    claims = {}
    for pos in owner_t:
        t, v = owner_t[pos] - 1, owner_v[pos] - 1
        if not (0 <= t < 128 and 0 <= v < 8):
            raise ProbeDecodeError(f"a_register_16bit: (row, k)={pos} decodes to (t={t}, v={v})")
        claims[pos] = (t, v)
    where = _invert(claims, [(t, v) for t in range(128) for v in range(8)], "a_register_16bit")
    return [[list(where[(t, v)]) for v in range(8)] for t in range(128)]


def decode_a_register_8bit(raw_runs: Sequence, acc32: list) -> list:
    """RS e4m3 (B = I, N=32): run d holds 1 + 3-bit digit d of code = 16 t + v."""
    if len(raw_runs) != 4:
        raise ProbeDecodeError(f"a_register_8bit: expected 4 digit runs, got {len(raw_runs)}")
    codes: dict = {}
    for digit, raw in enumerate(raw_runs):
        for pos, value in _matrix_from_accumulator(raw, acc32, f"a_register_8bit run {digit}").items():
            if not 1 <= value <= 8:
                raise ProbeDecodeError(f"a_register_8bit run {digit}: (row, k)={pos} holds {value}, not 1..8")
            codes[pos] = codes.get(pos, 0) | ((value - 1) << (3 * digit))
    claims = {}
    for pos, code in codes.items():
        if code >= 128 * 16:
            raise ProbeDecodeError(f"a_register_8bit: (row, k)={pos} decodes to code {code} >= 2048")
        claims[pos] = divmod(code, 16)
    where = _invert(claims, [(t, v) for t in range(128) for v in range(16)], "a_register_8bit")
    return [[list(where[(t, v)]) for v in range(16)] for t in range(128)]


def _tile_code(code: int, num: int, where: str) -> tuple:
    """1 + 64 matrix + 8 row + col  ->  (matrix, row, col), matrix < num."""
    if not 1 <= code <= 64 * num:
        raise ProbeDecodeError(f"{where}: {code:#x} is poison or names a matrix >= {num}")
    c = code - 1
    return (c // 64, (c // 8) % 8, c % 8)


def decode_ldmatrix(raw: Sequence[Sequence[int]], num: int, name: str) -> list:
    """Per lane, registers of two b16 halves (low half first) -> [matrix, row, col] per v."""
    if len(raw) != 32 or any(len(r) != num for r in raw):
        raise ProbeDecodeError(f"ldmatrix {name}: expected 32 lanes x {num} registers")
    claims, table = {}, []
    for lane, words in enumerate(raw):
        out = []
        for j, word in enumerate(words):
            for half in range(2):
                code = (int(word) >> (16 * half)) & 0xFFFF
                slot = _tile_code(code, num, f"ldmatrix {name} lane {lane} v {2 * j + half}")
                claims[(lane, 2 * j + half)] = slot
                out.append(list(slot))
        table.append(out)
    _invert(claims, [(m, r, c) for m in range(num) for r in range(8) for c in range(8)], f"ldmatrix {name}")
    return table


def decode_stmatrix(smem: Sequence[int], num: int, name: str) -> list:
    """The 4x8x8 b16 smem tile after stmatrix (zeroed before) -> per (lane, v) its slot."""
    if len(smem) != 256:
        raise ProbeDecodeError(f"stmatrix {name}: expected 256 slots, got {len(smem)}")
    claims = {}
    for index, value in enumerate(smem):
        slot = (index // 64, (index // 8) % 8, index % 8)
        if slot[0] >= num:
            if value != 0:
                raise ProbeDecodeError(f"stmatrix {name}: slot {slot} outside the {num} matrices was written")
            continue
        if not 1 <= value <= 256:
            raise ProbeDecodeError(f"stmatrix {name}: slot {slot} holds {value:#x} (poison or garbage)")
        lane, v = divmod(value - 1, 8)
        if v >= 2 * num:
            raise ProbeDecodeError(f"stmatrix {name}: slot {slot} got lane {lane} v {v} >= {2 * num}")
        claims[slot] = (lane, v)
    where = _invert(claims, [(lane, v) for lane in range(32) for v in range(2 * num)], f"stmatrix {name}")
    return [[list(where[(lane, v)]) for v in range(2 * num)] for lane in range(32)]


def decode_tma(entry: dict, name: str) -> dict:
    """A TMA box's smem image of u16 codes 1 + c0 + 256 c1 -> [c0, c1] per 2-byte slot."""
    if not entry.get("barrier_completed"):
        raise ProbeDecodeError(f"tma {name}: the mbarrier never completed; the copy did not land")
    inner, rows = entry["box"]
    smem = entry["smem"][0] if entry["smem"] and isinstance(entry["smem"][0], list) else entry["smem"]
    if len(smem) != inner * rows:
        raise ProbeDecodeError(f"tma {name}: {len(smem)} slots for a {inner}x{rows} box")
    claims, image = {}, []
    for slot, value in enumerate(smem):
        if value == 0:
            raise ProbeDecodeError(f"tma {name}: slot {slot} still zero (poison); nothing landed there")
        c1, c0 = divmod(int(value) - 1, 256)
        if c0 >= inner or c1 >= rows:
            raise ProbeDecodeError(f"tma {name}: slot {slot} got ({c0}, {c1}) outside the box")
        claims[slot] = (c0, c1)
        image.append([c0, c1])
    _invert(claims, [(c0, c1) for c1 in range(rows) for c0 in range(inner)], f"tma {name}")
    return {"dtype_bytes": 2, "box": [inner, rows], "smem": image}


def decode(raw: dict, meta: dict) -> dict:
    """The whole raw dump -> the hopper_probe.json document."""
    acc = {str(n): decode_accumulator(raw["wgmma_ss_bf16"][str(n)], n) for n in ACCUMULATOR_WIDTHS}
    rs16 = raw["wgmma_rs_bf16"]
    return {
        "meta": meta,
        "wgmma_accumulator": acc,
        "wgmma_a_register_16bit": decode_a_register_16bit(rs16["t_plus_1"], rs16["v_plus_1"], acc["16"]),
        "wgmma_a_register_8bit": decode_a_register_8bit(raw["wgmma_rs_e4m3"], acc["32"]),
        "ldmatrix": {k: decode_ldmatrix(raw["ldmatrix"][k], n, k) for k, n in LDMATRIX_COUNTS.items()},
        "stmatrix": {k: decode_stmatrix(raw["stmatrix"][k][0], n, k) for k, n in LDMATRIX_COUNTS.items()},
        "tma": {k: decode_tma(raw["tma"][k], k) for k in TMA_SWIZZLES if k in raw["tma"]},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("raw")
    parser.add_argument("out")
    parser.add_argument("--driver", default=None, help="driver version string (nvidia-smi)")
    parser.add_argument("--nvcc", default="unknown", help="nvcc version that built the probe")
    parser.add_argument("--command", default="unknown", help="command that ran the probe")
    parser.add_argument("--date", default=None, help="UTC date of the run (default: now)")
    args = parser.parse_args(argv)
    with open(args.raw) as f:
        raw = json.load(f)
    meta = {
        "device": raw["device"],
        "date": args.date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
        "driver": args.driver or f"CUDA driver API {raw['cuda_driver_version']}",
        "nvcc": args.nvcc,
        "command": args.command,
    }
    try:
        doc = decode(raw, meta)
    except ProbeDecodeError as err:
        print(f"probe_to_json: refusing to write {args.out}: {err}", file=sys.stderr)
        return 1
    with open(args.out, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"probe_to_json: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
