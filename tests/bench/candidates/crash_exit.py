"""A candidate that exits the process abruptly."""
import os


def matmul(inputs, outputs):
    os._exit(3)
