"""The CuTe-style layout algebra: shape:stride layouts, swizzles, CuTe notation.

Stands alone (imports nothing else of Argus) and evaluates on ints and on z3 bit-vector
terms alike; see docs/design/layout-api.md for the module map.
"""

from .int_tuple import (IntTupleError, congruent, crd2idx, depth, flatten, idx2crd,
                        is_tuple, prefix_product, product, rank, shape_div)
from .layout import (Layout, LayoutError, blocked_product, coalesce, complement, composition,
                     filter_layout, filter_zeros, flat_divide, left_inverse, logical_divide,
                     logical_product, make_layout, raked_product, right_inverse,
                     tiled_divide, tiled_product, zipped_divide, zipped_product)
from .notation import LayoutNotationError, format_layout, parse_int_tuple, parse_layout
from .swizzle import (HOPPER_SWIZZLES, ComposedLayout, Swizzle, SwizzleError, SwizzleInverse,
                      hopper_swizzle, swizzle_32b, swizzle_64b, swizzle_128b, swizzle_none)
from .symbolic import SymbolicError, const_like, no_overflow, sym_var, width_for

__all__ = [
    "IntTupleError", "congruent", "crd2idx", "depth", "flatten", "idx2crd", "is_tuple",
    "prefix_product", "product", "rank", "shape_div",
    "Layout", "LayoutError", "blocked_product", "coalesce", "complement", "composition",
    "filter_layout", "filter_zeros", "flat_divide", "left_inverse", "logical_divide",
    "logical_product", "make_layout", "raked_product", "right_inverse", "tiled_divide",
    "tiled_product", "zipped_divide", "zipped_product",
    "LayoutNotationError", "format_layout", "parse_int_tuple", "parse_layout",
    "HOPPER_SWIZZLES", "ComposedLayout", "Swizzle", "SwizzleError", "SwizzleInverse",
    "hopper_swizzle", "swizzle_32b", "swizzle_64b", "swizzle_128b", "swizzle_none",
    "SymbolicError", "const_like", "no_overflow", "sym_var", "width_for",
]
