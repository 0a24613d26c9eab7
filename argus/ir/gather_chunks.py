"""Which thread copies which piece of a warpgroup's row gather (`gather_cp_async`).

The gathered tile is R rows of C 16-byte chunks (a row of BK bf16 is C = BK / 8 chunks).
Its Q = R * C chunks are dealt to the 128 threads of the warpgroup warp by warp: warp w owns
rows [w * R/4, (w + 1) * R/4), and at its i-th copy lane l takes the warp's chunk
i * 32 + l, counted row-major over those rows. So each copy instruction of a warp moves
32 / C whole rows (four rows of 128 B for BK = 64: every global line it touches is read
whole), each thread makes Q / 128 copies, and a warp needs the indices of its own R/4 rows
only (one per lane, shared by shuffles on the GPU).

This mapping is the op's definition: the interpreter (argus/interp/ops/indexed.py) and the
code generator (argus/codegen/lower/gather.py) both take it from here, as they take the
persistent schedule from argus.ir.schedule.
"""

from __future__ import annotations

from argus.limits import WARP_SIZE, WARPGROUP_THREADS

CHUNK_BYTES = 16                                   # one cp.async (LDGSTS.128)
WARPS = WARPGROUP_THREADS // WARP_SIZE


def splits(rows: int) -> bool:
    """Whether `rows` rows split over the warpgroup's warps, at most a row per lane."""
    return rows > 0 and rows % WARPS == 0 and rows // WARPS <= WARP_SIZE


def problem(rows: int, row_bytes: int) -> str | None:
    """Why a tile of `rows` rows of `row_bytes` bytes cannot be gathered this way (None: it can)."""
    if row_bytes % CHUNK_BYTES:
        return (f"a gathered row of {row_bytes} B is not a whole number of {CHUNK_BYTES}-byte "
                "cp.async chunks")
    chunks = rows * (row_bytes // CHUNK_BYTES)
    if not splits(rows):
        return (f"{rows} rows cannot be split over the {WARPS} warps of a warpgroup with at "
                f"most {WARP_SIZE} rows a warp (4 to 128 rows, a multiple of 4)")
    if chunks % WARPGROUP_THREADS:
        return (f"{rows} rows x {row_bytes} B are {chunks} chunks of {CHUNK_BYTES} B, not a "
                f"multiple of the warpgroup's {WARPGROUP_THREADS} threads")
    return None


def copies_per_thread(rows: int, row_bytes: int) -> int:
    return rows * (row_bytes // CHUNK_BYTES) // WARPGROUP_THREADS


def chunk_of(thread: int, i: int, rows: int, row_bytes: int) -> tuple[int, int]:
    """(row, chunk) that thread `thread` (0..127 of the warpgroup) copies at its copy i."""
    per_row = row_bytes // CHUNK_BYTES
    warp, lane = divmod(thread, WARP_SIZE)
    q = i * WARP_SIZE + lane                      # the warp's chunk, row-major over its rows
    return warp * (rows // WARPS) + q // per_row, q % per_row


def rows_of_warp(warp: int, rows: int) -> range:
    return range(warp * (rows // WARPS), (warp + 1) * (rows // WARPS))


def index_row(lane: str, rows: int) -> str:
    """C expression: the row whose index the warpgroup thread `lane` (0..127) reads for the
    gather of a `rows`-row tile (lane l of warp w reads its warp's row l, w * R/4 + l; lanes
    past R/4 read none, and the expression names row 0 for them)."""
    per_warp = rows // WARPS
    if per_warp == WARP_SIZE:
        return lane
    return (f"({lane} % {WARP_SIZE} < {per_warp} ? ({lane} / {WARP_SIZE}) * {per_warp} + "
            f"{lane} % {WARP_SIZE} : 0)")

