#include "cut_stroke.hpp"

#include "core/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <glm/geometric.hpp>
#include <glm/vec3.hpp>
#include <limits>

namespace edn {
namespace {

using DVec3 = glm::dvec3;

DVec3 to_dvec(const Vec3& v) {
    return {v[0], v[1], v[2]};
}

Vec3 to_vec3(const DVec3& v) {
    return {v.x, v.y, v.z};
}

/// Rounding allowance on top of a joint's overlap: the outline's edge is offset across the
/// piece, not across the joint ray, which it meets at a slight angle.
constexpr double kMarginSafety = 1.05;

/// How much longer than the next piece's overlap a piece must be (the overlap is measured again
/// on the mesh this piece cut).
constexpr double kNextOverlapRoom = 1.5;

} // namespace

const char* cut_tool_name(CutTool tool) {
    return tool == CutTool::Plane ? "plane" : "stroke";
}

std::optional<CutTool> parse_cut_tool(std::string_view name) {
    if (name == "stroke") return CutTool::Stroke;
    if (name == "plane") return CutTool::Plane;
    return std::nullopt;
}

std::optional<CutPlane> stroke_piece(const ViewState& view, const glm::vec2& from,
                                     const glm::vec2& to, double reach, double margin_from,
                                     double margin_to) {
    const Ray a = view.ray(from);
    const Ray b = view.ray(to);
    const DVec3 oa(a.origin), ob(b.origin), da(a.direction), db(b.direction);
    // In-plane direction across the rays, from `from` towards `to`.
    const DVec3 normal = glm::cross(da, db);
    const double length = glm::length(normal);
    if (!(length > 1e-9) || !(reach > 0)) return std::nullopt;
    DVec3 across = glm::cross(normal / length, glm::normalize(da + db));
    if (glm::dot(across, ob + reach * db - (oa + reach * da)) < 0) across = -across;
    // The quad the two rays sweep, widened along `across` at each end: a convex trapezoid.
    CutPlane plane;
    plane.outline = {to_vec3(oa - margin_from * across), to_vec3(ob + margin_to * across),
                     to_vec3(ob + reach * db + margin_to * across),
                     to_vec3(oa + reach * da - margin_from * across)};
    DVec3 centre(0.0);
    for (const Vec3& corner : plane.outline) centre += 0.25 * to_dvec(corner);
    // The normal from the quad's diagonals: the rays' origins (on the near plane) need not
    // coincide, the four corners still lie in one plane through the eye.
    DVec3 n = glm::cross(to_dvec(plane.outline[2]) - to_dvec(plane.outline[0]),
                         to_dvec(plane.outline[3]) - to_dvec(plane.outline[1]));
    if (!(glm::length(n) > 0)) return std::nullopt;
    // Oriented as cross(from, to): consecutive pieces of a stroke agree (a bend needs that).
    if (glm::dot(n, normal) < 0) n = -n;
    plane.point = to_vec3(centre);
    plane.normal = to_vec3(glm::normalize(n));
    return plane;
}

double stroke_reach(const ViewState& view, std::span<const Vec3> vertex_positions) {
    const DVec3 eye(view.eye);
    double farthest = 0;
    for (const Vec3& p : vertex_positions)
        farthest = std::max(farthest, glm::length(to_dvec(p) - eye));
    // Past the farthest vertex, and never a zero-length quad.
    return 1.1 * farthest + 1e-6;
}

double joint_margin(const TetMesh& mesh, std::span<const Vec3> vertex_positions, const Ray& ray) {
    const DVec3 origin(ray.origin);
    const DVec3 direction = glm::normalize(DVec3(ray.direction));
    auto distance2 = [&](const Vec3& p) {
        const DVec3 r = to_dvec(p) - origin;
        const DVec3 off = r - glm::dot(r, direction) * direction;
        return glm::dot(off, off);
    };
    std::vector<double> longest(mesh.cells.size(), 0.0);
    parallel_for(0, mesh.num_cells(), [&](std::int64_t t) {
        const Cell& c = mesh.cells[static_cast<std::size_t>(t)];
        double edge2 = 0;
        for (int i = 0; i < 4; ++i)
            for (int j = i + 1; j < 4; ++j) {
                const DVec3 e = to_dvec(vertex_positions[static_cast<std::size_t>(c[i])]) -
                                to_dvec(vertex_positions[static_cast<std::size_t>(c[j])]);
                edge2 = std::max(edge2, glm::dot(e, e));
            }
        // A cell whose section meets the line has every vertex within its diameter (its
        // longest edge) of the line.
        for (Index v : c)
            if (distance2(vertex_positions[static_cast<std::size_t>(v)]) > edge2) return;
        longest[static_cast<std::size_t>(t)] = std::sqrt(edge2);
    });
    const double margin = longest.empty() ? 0.0 : *std::max_element(longest.begin(), longest.end());
    return kMarginSafety * margin;
}

StrokePiece plan_stroke_piece(const ViewState& view, const TetMesh& mesh,
                              std::span<const Vec3> vertex_positions, const glm::vec2& from,
                              const glm::vec2& to, const std::optional<Vec3>& previous_normal,
                              bool last) {
    const Ray a = view.ray(from);
    const Ray b = view.ray(to);
    const double margin_from = joint_margin(mesh, vertex_positions, a);
    if (!last) {
        // The next piece reaches back over this one by the overlap at `to`: this one must be
        // longer (with room, the mesh there changes with this cut), else that overlap would
        // reach past this piece's start, where the stroke went another way.
        const double margin_to = kNextOverlapRoom * joint_margin(mesh, vertex_positions, b);
        // The piece's width where it enters the body (it widens with depth).
        const DVec3 eye(view.eye);
        double nearest = std::numeric_limits<double>::infinity();
        for (const Vec3& p : vertex_positions)
            nearest = std::min(nearest, glm::length(to_dvec(p) - eye));
        const double width = glm::length((DVec3(b.origin) + nearest * DVec3(b.direction)) -
                                         (DVec3(a.origin) + nearest * DVec3(a.direction)));
        if (width < margin_to) return {};
    }
    StrokePiece piece{
        true, stroke_piece(view, from, to, stroke_reach(view, vertex_positions), margin_from, 0.0)};
    if (piece.blade && previous_normal) {
        // Behind `from` the blade follows the previous piece: its overlap recuts the previous
        // plane (and the cells across the joint) instead of opening a flap beside it.
        // Back across the joint: from the far corner at `to` to the one at `from`.
        const std::vector<Vec3>& o = piece.blade->outline;
        const Vec3 behind = {o[3][0] - o[2][0], o[3][1] - o[2][1], o[3][2] - o[2][2]};
        piece.blade->bend = BladeBend{to_vec3(DVec3(a.origin)), *previous_normal, behind};
    }
    return piece;
}

void CutStroke::begin(const glm::vec2& pixel) {
    points_.assign(1, pixel);
    last_normal_.reset();
}

void CutStroke::end() {
    points_.clear();
    last_normal_.reset();
}

} // namespace edn
