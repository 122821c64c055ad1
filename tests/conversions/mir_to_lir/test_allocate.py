"""The packing algorithms against a direct transcription of RLX's planner and against the rules."""

from hypothesis import given, settings
from hypothesis import strategies as st

from rlx_xdsl.conversions.mir_to_lir.allocate import (
    ByteRanges,
    Request,
    arena_size,
    best_fit,
    by_birth,
    by_death,
    by_lifetime,
    by_size,
    earliest_first,
    first_fit,
    latest_first,
    longest_first,
    lowest_fit,
    tightest_fit,
)
from rlx_xdsl.testing.rlx_planner import Buffer, rlx_offsets

ALIGN = 64


def rlx_first_fit(requests):
    """The oracle: RLX's planner transcribed from its description (`testing.rlx_planner`)."""
    return rlx_offsets([Buffer(r.raw_size, r.birth, r.death) for r in requests], ALIGN)


def conflicts(requests, offsets):
    """Pairs of requests live at a common step whose bytes overlap."""
    found = []
    for i, a in enumerate(requests):
        for j in range(i):
            b = requests[j]
            live_together = a.birth <= b.death and b.birth <= a.death
            if live_together and offsets[i] < offsets[j] + b.size and offsets[j] < offsets[i] + a.size:
                found.append((j, i))
    return found


@st.composite
def request_sets(draw):
    end = draw(st.integers(1, 12))
    n = draw(st.integers(1, 24))
    requests = []
    for k in range(n):
        if draw(st.booleans()) and draw(st.booleans()):
            birth, death = 0, end  # lives throughout, like an input or a parameter
        else:
            birth = draw(st.integers(0, end))
            death = draw(st.integers(birth, end))
        raw = draw(st.sampled_from([0, 4, 16, 60, 64, 100, 128, 200, 256, 1000]))
        requests.append(Request(-(-raw // ALIGN) * ALIGN, birth, death, raw, k))
    return requests, end


@settings(max_examples=200, deadline=None)
@given(request_sets())
def test_first_fit_is_rlx_planner(case):
    requests, end = case
    assert first_fit(requests, end) == rlx_first_fit(requests)


def pairwise_place(requests, end, fit, order):
    """The placement rule applied literally: in visiting order, each request at the fit
    that avoids every placed request live at one of its steps, compared pair by pair."""
    offsets = [None] * len(requests)
    permanent = ByteRanges()
    for i in order(requests):
        a = requests[i]
        if a.size == 0:
            offsets[i] = 0
            continue
        placed = [(offsets[j], offsets[j] + b.size) for j, b in enumerate(requests) if offsets[j] is not None and b.size]
        if a.birth == 0 and a.death >= end:
            offsets[i] = fit(a.size, ByteRanges(), sorted(placed))
            permanent.add(offsets[i], offsets[i] + a.size)
            continue
        temporaries = [
            (offsets[j], offsets[j] + b.size)
            for j, b in enumerate(requests)
            if offsets[j] is not None and b.size and not (b.birth == 0 and b.death >= end)
            and b.birth <= a.death and a.birth <= b.death
        ]
        offsets[i] = fit(a.size, permanent, sorted(temporaries))
    return offsets


STRATEGIES = {
    first_fit: (lowest_fit, by_size),
    best_fit: (tightest_fit, by_size),
    longest_first: (lowest_fit, by_lifetime),
    earliest_first: (lowest_fit, by_birth),
    latest_first: (lowest_fit, by_death),
}


@settings(max_examples=150, deadline=None)
@given(request_sets())
def test_indexed_placement_equals_comparing_every_pair(case):
    """The segment tree over steps finds exactly the bytes a pairwise comparison finds."""
    requests, end = case
    for strategy, (fit, order) in STRATEGIES.items():
        assert strategy(requests, end) == pairwise_place(requests, end, fit, order), strategy.__name__


def test_long_lived_temporaries_cost_no_pairwise_comparisons():
    """Many early-born, late-dying requests (parameters cast once at the top of a function)
    and a chain of short ones: the same offsets as pair by pair, all distinct where live together."""
    end = 400
    requests = [Request(128, 1 + k, 200 + 2 * k, 100, k) for k in range(100)]
    requests += [Request(64, 100 + k, 101 + k, 64, 100 + k) for k in range(200)]
    for strategy, (fit, order) in STRATEGIES.items():
        offsets = strategy(requests, end)
        assert offsets == pairwise_place(requests, end, fit, order), strategy.__name__
        assert conflicts(requests, offsets) == []


@settings(max_examples=200, deadline=None)
@given(request_sets())
def test_every_strategy_gives_valid_aligned_packings(case):
    requests, end = case
    for strategy in (first_fit, best_fit, longest_first, earliest_first, latest_first):
        offsets = strategy(requests, end)
        assert conflicts(requests, offsets) == []
        assert all(o % ALIGN == 0 for o in offsets)


def test_sharing_a_slot_between_buffers_that_do_not_coexist():
    # RLX memory.rs "sharing": a temporary that dies before another is born gives its bytes up.
    requests = [Request(64, 1, 2, 64, 0), Request(64, 3, 4, 64, 1)]
    assert first_fit(requests, 5) == [0, 0]
    assert arena_size(requests, first_fit(requests, 5)) == 64


def test_touching_live_ranges_do_not_share():
    # Inclusive bounds: dying at step 2 and being born at step 2 is coexisting.
    requests = [Request(64, 1, 2, 64, 0), Request(64, 2, 3, 64, 1)]
    assert first_fit(requests, 4) == [0, 64]


def test_larger_buffers_are_placed_first_and_take_the_low_offsets():
    requests = [Request(64, 0, 3, 10, 0), Request(128, 0, 3, 128, 1), Request(64, 0, 3, 64, 2)]
    assert first_fit(requests, 3) == [192, 0, 128]


def test_longest_first_places_the_longest_lived_request_first():
    # A short large buffer and a long small one that overlap: by size the large one
    # takes offset 0; longest first gives 0 to the long one.
    requests = [Request(128, 2, 3, 128, 0), Request(64, 0, 5, 64, 1)]
    assert first_fit(requests, 5) == [0, 128]
    assert longest_first(requests, 5) == [64, 0]


def test_earliest_first_places_in_schedule_order():
    # Born first gets the low offset, whatever its size.
    requests = [Request(128, 3, 4, 128, 0), Request(64, 1, 4, 64, 1)]
    assert first_fit(requests, 5) == [0, 128]
    assert earliest_first(requests, 5) == [64, 0]


def test_latest_first_places_the_last_to_die_first():
    requests = [Request(128, 0, 2, 128, 0), Request(64, 1, 4, 64, 1)]
    assert first_fit(requests, 5) == [0, 128]
    assert latest_first(requests, 5) == [64, 0]


def test_best_fit_keeps_the_large_gap_for_later():
    # A 64-byte gap at 0 and a 192-byte gap at 128, both free at steps 2..3;
    # the 64-byte buffer goes into the small gap under best fit, the lowest under first fit too;
    # a 64-byte buffer when the gaps are 128 (low) and 64 (high) shows the difference.
    occupied = ByteRanges()
    occupied.add(128, 192)
    occupied.add(256, 512)
    # gaps: [0, 128) (128 bytes) and [192, 256) (64 bytes)
    assert lowest_fit(64, occupied, []) == 0
    assert tightest_fit(64, occupied, []) == 192
    assert tightest_fit(128, occupied, []) == 0
    assert tightest_fit(256, occupied, []) == 512  # no gap is large enough: above everything


def test_lowest_fit_jumps_over_blockers_and_ranges():
    occupied = ByteRanges()
    occupied.add(0, 64)
    blockers = [(64, 128), (100, 300)]  # overlapping blockers; the furthest end counts
    assert lowest_fit(32, occupied, blockers) == 300
    assert lowest_fit(32, occupied, [(128, 192)]) == 64


def test_byte_ranges_merge_touching_and_overlapping_ranges():
    ranges = ByteRanges()
    for start, end in [(0, 10), (20, 30), (10, 20), (50, 60), (55, 70)]:
        ranges.add(start, end)
    assert list(zip(ranges.starts, ranges.ends)) == [(0, 30), (50, 70)]
    assert len(ranges) == 2
