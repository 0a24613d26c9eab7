"""The thread-value tables of fragment layouts live with the layout algebra
(argus.layout.fragments), where the code generator reads the same definition."""

from argus.layout.fragments import WARPGROUP, FragLayout, frag_layout, layout_of

__all__ = ["WARPGROUP", "FragLayout", "frag_layout", "layout_of"]
