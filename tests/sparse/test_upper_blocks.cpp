// The upper-triangle layout of element blocks (sparse/upper_blocks.hpp): its numbering covers
// each element's pairs a <= b once, and map sources recode to it and back.
#include "sparse/upper_blocks.hpp"

#include <gtest/gtest.h>
#include <vector>

namespace edn {
namespace {

TEST(UpperBlocks, IndexIsABijectionOntoTheUpperPairs) {
    for (int m : {4, 10, 20}) {
        std::vector<int> seen(upper_block_count(m), 0);
        int expected = 0;
        for (int a = 0; a < m; ++a)
            for (int b = a; b < m; ++b) {
                const int u = upper_block_index(m, a, b);
                ASSERT_EQ(u, expected++) << "row by row, m " << m; // (a, b) in row-major order
                int ra = -1, rb = -1;
                upper_block_pair(m, u, ra, rb);
                EXPECT_EQ(ra, a);
                EXPECT_EQ(rb, b);
                ++seen[u];
            }
        EXPECT_EQ(expected, upper_block_count(m));
        for (int c : seen) EXPECT_EQ(c, 1);
    }
}

TEST(UpperBlocks, SourcesRecodeAndBack) {
    for (int m : {4, 10, 20}) {
        const Index cells = 3;
        std::vector<int> hits(static_cast<std::size_t>(cells) * upper_block_count(m), 0);
        for (Index s = 0; s < cells * m * m; ++s) {
            const Index t = s / (m * m);
            const int a = (s % (m * m)) / m, b = s % m;
            const Index u = upper_source(s, m);
            EXPECT_EQ(u < 0, a > b) << "transposed exactly below the diagonal";
            const Index block = u < 0 ? ~u : u;
            EXPECT_EQ(block / upper_block_count(m), t) << "the same element";
            EXPECT_EQ(block % upper_block_count(m),
                      upper_block_index(m, a < b ? a : b, a < b ? b : a));
            EXPECT_EQ(full_source(u, m), s);
            ++hits[block];
        }
        // (a, b) and (b, a) share a block; the diagonal's are theirs alone.
        for (std::size_t k = 0; k < hits.size(); ++k) {
            int a = 0, b = 0;
            upper_block_pair(m, static_cast<int>(k % upper_block_count(m)), a, b);
            EXPECT_EQ(hits[k], a == b ? 1 : 2);
        }
    }
}

} // namespace
} // namespace edn
