import json

import pytest

from argus.agent.gemm_config import SMALLEST, ConfigError, parse_config
from argus.agent.providers import ProviderError, load_config
from argus.agent.reply import ReplyError, parse_reply


def test_reply_in_a_fence_with_prose_and_partial_config():
    text = 'Thinking...\n```json\n{"technique": "t", "config": {"stages": 3}}\n```\nDone.'
    p = parse_reply(text, SMALLEST)
    assert p.config.stages == 3 and p.config.BM == SMALLEST.BM and p.technique == "t"


@pytest.mark.parametrize("text,message", [
    ("", "empty"),
    ("I think you should use bigger tiles.", "no JSON object"),
    ('[64, 128, 64]', "no JSON object"),
    ('{"configuration": {"BM": 128}}', "no JSON object"),
    ('{"config": {"BM": "128"}}', "BM must be an integer"),
    ('{"config": {"persistent": 1}}', "persistent must be true or false"),
    ('{"config": {"stages": true}}', "stages must be an integer"),
    ('{"config": {"BM": 96}}', "BM=96 is not admissible"),
    ('{"config": {"warps": 8}}', "unknown knob 'warps'"),
    ('{"config": [64, 64]}', "must be a JSON object"),
    ('{"config": {}, "invariants": "all good"}', "invariants"),
    ('{"technique": 7, "config": {}}', "technique"),
])
def test_malformed_replies_are_rejected_with_a_reason(text, message):
    with pytest.raises(ReplyError, match=message):
        parse_reply(text, SMALLEST)


def test_every_bad_knob_is_reported_at_once():
    with pytest.raises(ConfigError) as err:
        parse_config({"BM": 7, "BN": "x", "nope": 1})
    assert len(err.value.problems) == 3


def test_a_huge_reply_is_cut_before_parsing():
    text = "x" * 30000 + json.dumps({"config": {"stages": 3}})
    with pytest.raises(ReplyError):
        parse_reply(text, SMALLEST)


def test_provider_config_precedence(tmp_path):
    path = tmp_path / "agent.toml"
    path.write_text('[provider]\nprovider = "anthropic"\nmodel = "from-file"\ntimeout_s = 5\n')
    config = load_config(env={"ARGUS_AGENT_CONFIG": str(path), "ARGUS_MODEL": "from-env",
                              "ANTHROPIC_API_KEY": "k"})
    assert (config.provider, config.model, config.timeout_s, config.api_key) == (
        "anthropic", "from-env", 5.0, "k")
    assert load_config({"model": "from-flag"}, env={"ARGUS_AGENT_CONFIG": str(path)}).model == "from-flag"
    assert "api_key" not in config.public() and config.public()["api_key_set"]
    assert load_config(env={}).provider == "embedded"
    with pytest.raises(ProviderError, match="unknown"):
        load_config(env={"ARGUS_PROVIDER": "gpt-magic"})
    with pytest.raises(ProviderError, match="not a number"):
        load_config(env={"ARGUS_TIMEOUT_S": "soon"})
    path.write_text("[provider]\nsecret_mode = true\n")
    with pytest.raises(ProviderError, match="unknown key 'secret_mode'"):
        load_config(env={"ARGUS_AGENT_CONFIG": str(path)})


from hypothesis import given, settings, strategies as st  # noqa: E402

_JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                        | st.text(max_size=20),
                        lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(st.text(max_size=12), inner, max_size=4), max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(max_size=300),
                 _JSONISH.map(json.dumps),
                 st.dictionaries(st.sampled_from(["BM", "BN", "BK", "stages", "consumers",
                                                  "persistent", "raster", "x"]),
                                 _JSONISH, max_size=5).map(
                     lambda c: json.dumps({"technique": "t", "config": c}))))
def test_any_reply_parses_or_is_rejected_with_a_reply_error(text):
    try:
        proposal = parse_reply(text, SMALLEST)
    except ReplyError as err:
        assert str(err)
        return
    if not proposal.stop:
        assert parse_config(proposal.config.to_json()) == proposal.config
