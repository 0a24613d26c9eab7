"""A candidate that never returns."""
import time


def matmul(inputs, outputs):
    while True:
        time.sleep(3600)
