"""Context-parallel (zig-zag ring) attention, examples/context_parallel: the plan's coverage of the
causal mask, and the ring simulated in one process on zyfa's CPU backend (numpy only, the same
chunks, masks and merges as the torch.distributed program) against one zyfa call on the whole
sequence, within the merge's bounds (docs/api.md). The torch.distributed run itself is the CTest
bindings_python_context_parallel (skipped where torch is not installed)."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "examples", "context_parallel"))
import cp_ring  # noqa: E402
import ring_simulation  # noqa: E402


@pytest.mark.parametrize("world", [1, 2, 3, 4])
def test_the_plan_covers_each_causal_query_key_pair_once(world):
    # Small chunks of c tokens; expand every (half, key range, mask) call into the global
    # (query, key) pairs it attends and compare with the causal set.
    c = 3
    seqlen = 2 * world * c
    seen = {}
    for rank in range(world):
        ranges = cp_ring.local_token_ranges(rank, world, seqlen)
        for step in range(world):
            src = cp_ring.ring_source(rank, world, step)
            src_tokens = [t for t0, t1 in cp_ring.local_token_ranges(src, world, seqlen) for t in range(t0, t1)]
            for half, (k0, k1), causal in cp_ring.pairs(rank, src, world, c):
                queries = list(range(*ranges[half]))
                keys = src_tokens[k0:k1]
                for i, qt in enumerate(queries):
                    for j, kt in enumerate(keys):
                        # zyfa's rule (docs/api.md): bottom-right causal sees j <= i + sk - sq
                        if causal == "bottom_right" and j > i + len(keys) - len(queries):
                            continue
                        assert causal in (False, "bottom_right")
                        seen[(qt, kt)] = seen.get((qt, kt), 0) + 1
    expected = {(qt, kt) for qt in range(seqlen) for kt in range(qt + 1)}
    assert set(seen) == expected
    assert all(n == 1 for n in seen.values())


def visible(sq, sk, causal):
    """(query, key) pairs one call attends: bottom-right causal sees j <= i + sk - sq."""
    if not causal:
        return sq * sk
    return sum(max(0, min(sk, i + sk - sq + 1)) for i in range(sq))


@pytest.mark.parametrize("world", [2, 3, 4])
def test_every_step_has_the_same_work_on_every_rank(world):
    # Load balance, the reason for the zig-zag split: at each ring step every rank attends as many
    # (query, key) pairs (step 0, the diagonal: 2c^2 + c; later steps: 2c^2).
    c = 4
    for step in range(world):
        work = {sum(visible(c, k1 - k0, causal) for _, (k0, k1), causal
                    in cp_ring.pairs(rank, cp_ring.ring_source(rank, world, step), world, c))
                for rank in range(world)}
        assert work == {2 * c * c + (c if step == 0 else 0)}, (step, work)


CONFIGS = [("fp8", "exact"), ("fp8", "lean"), ("bf16", "exact")]


@pytest.mark.parametrize("world,seqlen", [(2, 1024), (3, 768)])
@pytest.mark.parametrize("dtype,softmax", CONFIGS)
@pytest.mark.parametrize("inputs", ["gaussian", "sink"])
def test_simulated_ring_equals_the_single_call_within_the_merge_bound(world, seqlen, dtype, softmax, inputs):
    ok, diff, bounds = ring_simulation.run(seqlen=seqlen, world=world, heads=4, heads_kv=2, dim=64,
                                           dtype=dtype, softmax=softmax, inputs=inputs, log=lambda s: None)
    assert ok, (diff, bounds)
    if inputs == "gaussian":
        # Not zero either: the parts round P against their own running maxima, so a ring that
        # quietly ran the single call would show up here (the sink inputs are the bitwise-close case).
        assert diff[0] > 0


def wrong_diagonal_mask(rank, src, world, c):
    """The plan with top-left causal on the late half's diagonal call (c queries, 2c keys): query i
    then sees only keys <= i of the earlier chunk, the mistake docs/api.md's masks warn about."""
    plan = cp_ring.pairs(rank, src, world, c)
    return [(h, r, "top_left" if h == cp_ring.HI and m else m) for h, r, m in plan]


def no_mask_on_the_diagonal(rank, src, world, c):
    """The plan with the diagonal calls unmasked: queries see future keys."""
    return [(h, r, False) for h, r, m in cp_ring.pairs(rank, src, world, c)]


@pytest.mark.parametrize("plan", [wrong_diagonal_mask, no_mask_on_the_diagonal])
@pytest.mark.parametrize("inputs", ["gaussian", "sink"])
def test_a_wrong_mask_fails_the_check(plan, inputs):
    # The assertion above can fail: a wrong mask moves O far beyond the tight bound (sink inputs)
    # and lse beyond EXACT's 2e-4 (gaussian).
    ok, diff, bounds = ring_simulation.run(seqlen=1024, world=2, heads=4, heads_kv=2, dim=64, dtype="fp8",
                                           softmax="exact", inputs=inputs, pairs=plan, log=lambda s: None)
    assert not ok, (diff, bounds)
