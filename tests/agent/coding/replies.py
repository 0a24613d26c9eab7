"""Scripted replies for the coder-loop tests: a whole kernel file, a stop, and the
deliberately slow one-stage attention kernel they start from."""
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SLOW = REPO / "tests/fixtures/attention/flash_attention_one_stage.py"
STOP = json.dumps({"stop": True})


def file_reply(source: str, technique: str) -> str:
    """A model's reply proposing a whole kernel file."""
    return json.dumps({"technique": technique}) + f"\n```python\n{source}```\n"
