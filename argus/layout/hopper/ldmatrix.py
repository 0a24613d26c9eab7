"""ldmatrix / stmatrix m8n8 .b16 fragments (.x1, .x2, .x4, optionally .trans).

The `num` 8x8 matrices are stacked vertically into an (8*num) x 8 tile: matrix i is rows
8i..8i+7. Lanes 8i..8i+7 supply the 16-byte row addresses of matrix i. Lane l holds, in
register i, row l/4 and columns 2(l%4), 2(l%4)+1 of matrix i; .trans transposes each
matrix (lane l then holds column l/4, rows 2(l%4) and 2(l%4)+1). stmatrix is the same
distribution run the other way (PTX ISA, "Warp-level matrix load / store instructions").
"""

from __future__ import annotations

from ..layout import Layout
from .tv import TVLayout, TVLayoutError

WARP_LANES = 32
MATRIX_COUNTS = (1, 2, 4)


def _check_num(num: int, op: str):
    if num not in MATRIX_COUNTS:
        raise TVLayoutError(f"{op} loads .x1, .x2 or .x4 matrices, not {num}")


def matrix_fragment(num: int, trans: bool = False, op: str = "ldmatrix") -> TVLayout:
    """Lane x (2 halves per register, `num` registers) -> the stacked (8*num) x 8 tile."""
    _check_num(num, op)
    rows = 8 * num
    if trans:
        # lane%4 -> row pair of the stored matrix, lane/4 -> column; half -> next row
        layout = Layout(((4, 8), (2, num)), ((2, rows), (1, 8)))
    else:
        # lane%4 -> column pair, lane/4 -> row; half -> next column, register -> matrix
        layout = Layout(((4, 8), (2, num)), ((2 * rows, 1), (rows, 8)))
    name = f"{op}_x{num}" + ("_trans" if trans else "")
    return TVLayout(name, layout, (rows, 8), WARP_LANES, 2 * num)


def ldmatrix(num: int, trans: bool = False) -> TVLayout:
    return matrix_fragment(num, trans, "ldmatrix")


def stmatrix(num: int, trans: bool = False) -> TVLayout:
    return matrix_fragment(num, trans, "stmatrix")


def row_address_lane(matrix: int, row: int, num: int) -> int:
    """The lane whose address operand names row `row` of matrix `matrix` (lanes 8i+r)."""
    _check_num(num, "ldmatrix")
    if not (0 <= matrix < num and 0 <= row < 8):
        raise TVLayoutError(f"matrix {matrix} row {row} does not exist in an .x{num} access "
                            f"(matrices 0..{num - 1}, rows 0..7)")
    return 8 * matrix + row


def address_lanes(num: int) -> list[int]:
    """The lanes whose addresses are read (.x1: 0-7, .x2: 0-15, .x4: all 32)."""
    _check_num(num, "ldmatrix")
    return list(range(8 * num))
