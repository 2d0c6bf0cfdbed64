#pragma once
/// Union-find over the few cells of one vertex star (the separation of mesh/cut.cpp and
/// mesh/cut_local.cpp): path halving, union by lower index so that the root of a set is its
/// lowest local index (groups are then met in cell order); reset() reuses the storage.

#include <numeric>
#include <utility>
#include <vector>

namespace edn {

/// Union-find over n local indices (see the file comment).
struct StarUnionFind {
    std::vector<int> parent;
    StarUnionFind() = default;
    /// n singleton sets.
    explicit StarUnionFind(int n) { reset(n); }
    /// Back to n singleton sets, keeping the storage.
    void reset(int n) {
        parent.resize(n);
        std::iota(parent.begin(), parent.end(), 0);
    }
    /// The root (lowest index) of i's set.
    int find(int i) {
        while (parent[i] != i) i = parent[i] = parent[parent[i]];
        return i;
    }
    /// Joins the sets of a and b.
    void unite(int a, int b) {
        a = find(a), b = find(b);
        if (a == b) return;
        if (a < b) std::swap(a, b);
        parent[a] = b;
    }
};

} // namespace edn
