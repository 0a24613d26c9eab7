"""The coder-loop tests' task: attention at T=256 from the slow one-stage kernel."""
import pytest

from argus.agent.tasks.file_task import op_task

from tests.agent.coding.replies import SLOW


@pytest.fixture(scope="module")
def attention():
    return op_task("attention", {"T": 256}, start=SLOW)
