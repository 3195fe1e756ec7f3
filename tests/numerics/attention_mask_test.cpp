// visible_keys (the interval the kernels iterate) agrees with key_visible (the definition of
// docs/api.md, written out independently here) for every mask, window and shape combination.
#include "cmocka_cpp.hpp"
#include "common/attention_mask.h"

using namespace zyfa::numerics;

namespace {

bool visible_by_definition(int64_t i, int64_t j, int64_t sq, int64_t sk, int mask, int64_t wl, int64_t wr) {
    const int64_t d = mask == 1 ? 0 : sk - sq;
    if (mask != 0 && !(j <= i + d)) return false;
    if (wl >= 0 && !(j >= i + d - wl)) return false;
    if (wr >= 0 && !(j <= i + d + wr)) return false;
    return true;
}

void test_interval_matches_definition(void**) {
    const int64_t lengths[] = {0, 1, 3, 7, 64, 65};
    const int64_t windows[] = {-1, 0, 1, 5, 100};
    for (int64_t sq : lengths)
        for (int64_t sk : lengths)
            for (int mask = 0; mask < 3; ++mask)
                for (int64_t wl : windows)
                    for (int64_t wr : windows)
                        for (int64_t i = 0; i < sq; ++i) {
                            const KeyRange r = visible_keys(i, sq, sk, static_cast<MaskKind>(mask), wl, wr);
                            for (int64_t j = 0; j < sk; ++j) {
                                const bool want = visible_by_definition(i, j, sq, sk, mask, wl, wr);
                                assert_int_equal(j >= r.begin && j < r.end, want);
                                assert_int_equal(key_visible(i, j, sq, sk, static_cast<MaskKind>(mask), wl, wr), want);
                            }
                        }
}

void test_causal_examples(void**) {
    // Top-left: query 0 sees key 0 only. Bottom-right with sq=2, sk=5: query 0 sees keys 0..3.
    KeyRange r = visible_keys(0, 4, 4, MaskKind::Causal, -1, -1);
    assert_int_equal(r.begin, 0);
    assert_int_equal(r.end, 1);
    r = visible_keys(0, 2, 5, MaskKind::CausalBottomRight, -1, -1);
    assert_int_equal(r.end, 4);
    r = visible_keys(0, 5, 2, MaskKind::CausalBottomRight, -1, -1);  // sq > sk: first rows see nothing
    assert_true(r.begin >= r.end);
}

// The sm_90a kernels issue a tile's first key block before the tile's rows have found their key
// ranges (issue_first_copies in kernels/nvidia/sm90/producer.cuh): they take the block of the tile's
// first row, which needs every row's range to begin and end no earlier than the row before it, so
// that where the first row sees a key its begin is the smallest begin of the rows that see one.
void test_ranges_move_forward(void**) {
    const int64_t lengths[] = {1, 3, 7, 64, 65, 200};
    const int64_t windows[] = {-1, 0, 1, 5, 100};
    for (int64_t sq : lengths)
        for (int64_t sk : lengths)
            for (int mask = 0; mask < 3; ++mask)
                for (int64_t wl : windows)
                    for (int64_t wr : windows) {
                        const auto kind = static_cast<MaskKind>(mask);
                        for (int64_t i = 1; i < sq; ++i) {
                            const KeyRange before = visible_keys(i - 1, sq, sk, kind, wl, wr);
                            const KeyRange r = visible_keys(i, sq, sk, kind, wl, wr);
                            assert_true(r.begin >= before.begin);
                            assert_true(r.end >= before.end);
                        }
                        // every tile's first row, tiles of 16 rows
                        for (int64_t row0 = 0; row0 < sq; row0 += 16) {
                            const KeyRange first = visible_keys(row0, sq, sk, kind, wl, wr);
                            if (!(first.begin < first.end)) continue;
                            for (int64_t i = row0; i < sq && i < row0 + 16; ++i) {
                                const KeyRange r = visible_keys(i, sq, sk, kind, wl, wr);
                                if (r.begin < r.end) assert_true(r.begin >= first.begin);
                            }
                        }
                    }
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interval_matches_definition),
        cmocka_unit_test(test_causal_examples),
        cmocka_unit_test(test_ranges_move_forward),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
