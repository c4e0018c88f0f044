"""The shipped JSON Schema names exactly the keys the validator accepts."""

import json
from importlib import resources

from sectorviz.model import pattern as pattern_module


def schema():
    return json.loads(resources.files("sectorviz.model").joinpath("pattern.schema.json")
                      .read_text())


def test_schema_keys_match_validator():
    s = schema()
    defs = s["$defs"]
    assert set(s["properties"]) == pattern_module.TOP_KEYS
    assert set(s["properties"]["launch"]["properties"]) == pattern_module.LAUNCH_KEYS
    assert set(s["properties"]["kernel"]["properties"]) == pattern_module.KERNEL_KEYS
    assert set(defs["array"]["properties"]) == pattern_module.ARRAY_KEYS
    assert set(defs["access"]["properties"]) == pattern_module.ACCESS_KEYS
    assert set(defs["loop"]["properties"]) == pattern_module.LOOP_KEYS
    assert (set(defs["array"]["properties"]["dtype"]["oneOf"][0]["enum"])
            == set(pattern_module.DTYPE_BYTES))
    kinds = {v["properties"]["kind"]["const"]: set(v["properties"]) - {"kind"}
             for v in defs["array"]["properties"]["values"]["oneOf"]}
    assert kinds == pattern_module.VALUE_KINDS
    assert s["properties"]["format"]["const"] == pattern_module.FORMAT
