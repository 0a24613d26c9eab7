"""The wgmma descriptors as the code generator wrote them before smem_descriptor_at (each k
step's descriptor from its own address), for the device A/B of scripts/device_descriptor_ab.sh
(spliced over argus/codegen/lower/wgmma.py's _descriptor by scripts/ab/splice.py)."""


def _descriptor(address: str, d) -> str:
    """smem_descriptor(address + the k step's byte offset, fields): an and, a shift and an or
    per step."""
    offset = f" + {d.start_address}" if d.start_address else ""
    return f"argus::smem_descriptor({address}{offset}, {_fields(d)})"
