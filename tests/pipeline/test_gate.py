"""The compiler gate: strict front end on every response, blocks checked together, repair
pairs checked both ways, parallel results equal serial ones."""

from __future__ import annotations

from pipeline.gate import BROKEN_PASSES, NO_BLOCK, RESPONSE_FAILS, WRONG_CODE, Rejection, gate_pair, gate_pairs
from pipeline.generators.base import Pair


def _pair(response: str, pid: str = "x", prompt: str = "q", expect: str | None = None) -> Pair:
    return Pair(id=pid, instance_id="i", source="preflight" if expect else "organic", family="functions",
                construct="c", difficulty=1, seed=1, theme="library", prompt=prompt, response=response,
                broken=None, expect_code=expect)


GOOD = "```vox\nfn inc(a: int) to int {\n  ret a + 1\n}\n```\nDone."


def _rejected(pair: Pair) -> Rejection:
    rej = gate_pair(pair)
    assert rej is not None, f"{pair.id} passed the gate"
    return rej


def test_valid_response_passes() -> None:
    assert gate_pair(_pair(GOOD)) is None


def test_no_block_and_failing_program_are_rejected() -> None:
    assert _rejected(_pair("just prose")).reason == NO_BLOCK
    rej = _rejected(_pair("```vox\nfn half(x: int) to int { x / 2 }\n```"))
    assert (rej.reason, rej.code, rej.line) == (RESPONSE_FAILS, "E0508", 1)


def test_strict_mode_rejects_warnings() -> None:
    rej = gate_pair(_pair("```vox\nfn f() { return }\n```"))
    assert rej is not None and rej.code == "W0001"


def test_blocks_of_one_response_form_one_module() -> None:
    two = "```vox\nfn inc(a: int) to int { ret a + 1 }\n```\nthen\n```vox\nprint(inc(2))\n```"
    assert gate_pair(_pair(two)) is None
    assert _rejected(_pair("```vox\nprint(inc(2))\n```")).code == "E0401"


def test_repair_pairs_are_checked_both_ways() -> None:
    broken = "```vox\nfn one() -> int { ret 1 }\n```"
    fixed = "```vox\nfn one() to int { ret 1 }\n```"
    assert gate_pair(_pair(fixed, prompt=broken, expect="E0308")) is None
    assert _rejected(_pair(fixed, prompt=broken, expect="E0310")).reason == WRONG_CODE
    assert _rejected(_pair(fixed, prompt=fixed, expect="E0308")).reason == BROKEN_PASSES
    assert _rejected(_pair(broken, prompt=broken, expect="E0308")).reason == RESPONSE_FAILS


def test_parallel_gate_matches_serial() -> None:
    pairs = [_pair(GOOD if i % 3 else "no code", pid=f"p{i}") for i in range(30)]
    serial, parallel = gate_pairs(pairs, workers=1, chunk_size=7), gate_pairs(pairs, workers=2, chunk_size=7)
    assert serial.passed == parallel.passed and serial.rejections == parallel.rejections
    assert len(serial.passed) == 20 and serial.family_pass_rates() == {"functions": 20 / 30}
    assert serial.top_codes() == [(NO_BLOCK, 10)]
