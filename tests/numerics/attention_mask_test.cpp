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

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interval_matches_definition),
        cmocka_unit_test(test_causal_examples),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
