"""The verifier: tag propagation (tags/), protocol checks (protocol/) and resource
checks (resources.py), each returning Findings (finding.py); driver.verify runs them."""


def verify(kernel):
    """Every finding for `kernel`, sorted and deduplicated (argus.verify.driver)."""
    from argus.verify.driver import verify as _verify
    return _verify(kernel)


__all__ = ["verify"]
