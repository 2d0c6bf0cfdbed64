#include "sim/state_file.hpp"

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#include "sim/json_fields.hpp"
#include "sim/settings_json.hpp"
#include "solver/newton.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace edn {
namespace {

constexpr char kMagic[8] = {'E', 'D', 'N', 'S', 'T', 'A', 'T', 'E'};
constexpr std::uint32_t kByteOrderMark = 0x01020304;

std::uint64_t fnv1a(const char* data, std::size_t size) {
    std::uint64_t hash = 14695981039346656037ull;
    for (std::size_t i = 0; i < size; ++i) {
        hash ^= static_cast<unsigned char>(data[i]);
        hash *= 1099511628211ull;
    }
    return hash;
}

template <class T> void append(std::string& out, const T& value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <class T> void append_array(std::string& out, const T* data, std::size_t count) {
    out.append(reinterpret_cast<const char*>(data), count * sizeof(T));
}

Json drag_json(const DragSpring& drag) {
    Json region = Json::array();
    for (const DragNode& n : drag.region)
        region.push_back(Json::array({n.node, n.weight, n.offset[0], n.offset[1], n.offset[2]}));
    return JsonObject()
        .add("vertices", Json::array({drag.vertices[0], drag.vertices[1], drag.vertices[2]}))
        .add("weights", Json::array({drag.weights[0], drag.weights[1], drag.weights[2]}))
        .add("target", Json::array({drag.target[0], drag.target[1], drag.target[2]}))
        .add("stiffness", drag.stiffness)
        .add("region", region)
        .json();
}

DragSpring read_drag(const JsonFieldReader& r, const JsonField& field) {
    r.expect_object(field, {"vertices", "weights", "target", "stiffness", "region"});
    for (const char* key : {"vertices", "weights", "target", "stiffness", "region"})
        if (!field->contains(key)) r.fail(field, std::string("needs \"") + key + "\"");
    DragSpring drag;
    const JsonField vertices = r.member(field, "vertices");
    if (!vertices->is_array() || vertices->size() != 3) r.fail(vertices, "expected 3 vertices");
    for (std::size_t k = 0; k < 3; ++k)
        drag.vertices[k] = static_cast<Index>(
            r.integer(r.element(vertices, k), 0, std::numeric_limits<Index>::max()));
    drag.weights = r.vec3(r.member(field, "weights"));
    drag.target = r.vec3(r.member(field, "target"));
    drag.stiffness = r.number(r.member(field, "stiffness"));
    const JsonField region = r.member(field, "region");
    r.expect_array(region);
    for (std::size_t i = 0; i < region->size(); ++i) {
        const JsonField entry = r.element(region, i);
        if (!entry->is_array() || entry->size() != 5)
            r.fail(entry, "expected [node, weight, ox, oy, oz]");
        DragNode node;
        node.node = static_cast<Index>(
            r.integer(r.element(entry, 0), 0, std::numeric_limits<Index>::max()));
        node.weight = r.number(r.element(entry, 1));
        for (int d = 0; d < 3; ++d) node.offset[d] = r.number(r.element(entry, d + 2));
        drag.region.push_back(node);
    }
    return drag;
}

/// Reads the byte ranges of a state file in order; every shortfall is "truncated".
class ByteReader {
public:
    ByteReader(const std::string& bytes, const std::string& source)
        : bytes_(bytes), source_(source) {}

    void need(std::size_t size, const char* what) const {
        if (bytes_.size() - offset_ < size) {
            std::ostringstream message;
            message << source_ << ": truncated state file (" << bytes_.size()
                    << " bytes; it ends inside the " << what << ")";
            throw Error(ErrorCode::Parse, message.str());
        }
    }
    template <class T> T value(const char* what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, bytes_.data() + offset_, sizeof(T));
        offset_ += sizeof(T);
        return v;
    }
    template <class T> std::vector<T> array(std::size_t count, const char* what) {
        if (count > (bytes_.size() - offset_) / sizeof(T)) need(bytes_.size(), what);
        std::vector<T> v(count);
        std::memcpy(v.data(), bytes_.data() + offset_, count * sizeof(T));
        offset_ += count * sizeof(T);
        return v;
    }
    std::string text(std::size_t size, const char* what) {
        need(size, what);
        std::string t = bytes_.substr(offset_, size);
        offset_ += size;
        return t;
    }
    std::size_t offset() const { return offset_; }

private:
    const std::string& bytes_;
    const std::string& source_;
    std::size_t offset_ = 0;
};

[[noreturn]] void bad(const std::string& source, const std::string& problem) {
    throw Error(ErrorCode::Parse, source + ": " + problem);
}

} // namespace

SimulationState capture_state(const Simulation& simulation) {
    SimulationState state;
    state.mesh = simulation.mesh();
    state.settings = simulation.settings();
    state.positions = simulation.positions();
    state.velocities = simulation.velocities();
    state.pinned = simulation.pinned();
    state.drag = simulation.drag();
    state.memory = simulation.solver_memory();
    state.frame = simulation.frame();
    return state;
}

std::unique_ptr<Simulation> restore_simulation(const SimulationState& state,
                                               const std::string& source) {
    auto simulation = std::make_unique<Simulation>(state.mesh, state.settings);
    const std::size_t nodes = static_cast<std::size_t>(simulation->num_nodes());
    if (state.positions.size() != 3 * nodes || state.velocities.size() != 3 * nodes ||
        state.pinned.size() != nodes ||
        (!state.memory.warm_start.empty() && state.memory.warm_start.size() != 3 * nodes)) {
        std::ostringstream message;
        message << "the state's node arrays do not fit its mesh at order " << state.settings.order
                << " (" << nodes << " nodes)";
        bad(source, message.str());
    }
    simulation->set_state(state.positions, state.velocities);
    simulation->set_pins(state.pinned);
    try {
        simulation->set_drag(state.drag);
    } catch (const Error& error) {
        bad(source, std::string("drag: ") + error.what());
    }
    simulation->set_solver_memory(state.memory);
    simulation->set_frame(state.frame);
    return simulation;
}

void write_state_file(const std::filesystem::path& path, const SimulationState& state) {
    Json header = Json::object();
    header["vertices"] = state.mesh.num_vertices();
    header["cells"] = state.mesh.num_cells();
    header["nodes"] = static_cast<std::int64_t>(state.pinned.size());
    header["frame"] = state.frame;
    header["warm_start"] = !state.memory.warm_start.empty();
    header["drag"] = state.drag ? drag_json(*state.drag) : Json(nullptr);
    Json settings = Json::object();
    write_settings_json(state.settings, nullptr, settings);
    header["settings"] = settings;
    const std::string header_text = to_json_text(header, {JsonLayout::Compact});

    std::string bytes(kMagic, sizeof(kMagic));
    append(bytes, kStateVersion);
    append(bytes, kByteOrderMark);
    append(bytes, static_cast<std::uint64_t>(header_text.size()));
    bytes += header_text;
    for (const Vec3& p : state.mesh.positions) append_array(bytes, p.data(), 3);
    for (const Cell& c : state.mesh.cells) append_array(bytes, c.data(), 4);
    append_array(bytes, state.positions.data(), state.positions.size());
    append_array(bytes, state.velocities.data(), state.velocities.size());
    append_array(bytes, state.pinned.data(), state.pinned.size());
    append(bytes, state.memory.strain_at_x);
    append(bytes, state.memory.kinetic_at_x);
    append_array(bytes, state.memory.warm_start.data(), state.memory.warm_start.size());
    append(bytes, fnv1a(bytes.data(), bytes.size()));
    write_file_atomically(path, [&](std::ostream& out) {
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    });
}

SimulationState read_state_file(const std::filesystem::path& path) {
    const std::string source = path.string();
    std::ifstream in(path, std::ios::binary);
    EDN_VERIFY(in, ErrorCode::Io, source << ": cannot open for reading");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    EDN_VERIFY(!in.bad(), ErrorCode::Io, source << ": read error");
    const std::string bytes = buffer.str();

    ByteReader r(bytes, source);
    if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
        bad(source, "not an elastodyn state file (no EDNSTATE header)");
    r.text(sizeof(kMagic), "header");
    const auto version = r.value<std::uint32_t>("header");
    if (version != kStateVersion)
        bad(source, "state file version " + std::to_string(version) + " (this elastodyn reads " +
                        std::to_string(kStateVersion) + ")");
    if (r.value<std::uint32_t>("header") != kByteOrderMark)
        bad(source, "state file written with another byte order");
    const auto header_size = r.value<std::uint64_t>("header");
    if (header_size > bytes.size()) r.need(bytes.size(), "JSON header");
    const std::string header_text = r.text(static_cast<std::size_t>(header_size), "JSON header");
    // The checksum covers everything, so a damaged header is reported as such, not misread.
    if (bytes.size() >= r.offset() + sizeof(std::uint64_t)) {
        std::uint64_t stored = 0;
        std::memcpy(&stored, bytes.data() + bytes.size() - sizeof(stored), sizeof(stored));
        const std::uint64_t computed = fnv1a(bytes.data(), bytes.size() - sizeof(stored));
        if (stored != computed) {
            // Either the file was cut short or bytes changed: tell which when the sizes say so.
            const Json parsed = Json::parse(header_text, nullptr, false);
            if (!parsed.is_discarded() && parsed.is_object() && parsed.contains("nodes") &&
                parsed.contains("vertices") && parsed.contains("cells") &&
                parsed["nodes"].is_number_unsigned() && parsed["vertices"].is_number_unsigned() &&
                parsed["cells"].is_number_unsigned()) {
                const std::uint64_t n = parsed["nodes"].get<std::uint64_t>();
                const std::uint64_t expected =
                    r.offset() + 24 * parsed["vertices"].get<std::uint64_t>() +
                    16 * parsed["cells"].get<std::uint64_t>() + 49 * n + 16 +
                    (parsed.value("warm_start", false) ? 24 * n : 0) + 8;
                if (bytes.size() < expected) {
                    std::ostringstream message;
                    message << "truncated state file (" << bytes.size() << " of " << expected
                            << " bytes)";
                    bad(source, message.str());
                }
            }
            bad(source, "corrupt state file (checksum mismatch)");
        }
    } else {
        r.need(sizeof(std::uint64_t), "checksum");
    }

    JsonLines lines;
    const Json header = parse_json(header_text, source + " (header)", &lines);
    const JsonFieldReader reader(source + " (header)", &lines);
    const JsonField root = reader.root(header);
    reader.expect_object(root, {"vertices", "cells", "nodes", "frame", "warm_start", "drag",
                                "settings", "projection_hold"});
    for (const char* key : {"vertices", "cells", "nodes", "frame", "warm_start", "settings"})
        if (!header.contains(key)) reader.fail(root, std::string("needs \"") + key + "\"");
    constexpr std::int64_t kMaxCount = std::numeric_limits<Index>::max();
    const auto vertices = reader.integer(reader.member(root, "vertices"), 1, kMaxCount);
    const auto cells = reader.integer(reader.member(root, "cells"), 1, kMaxCount);
    const auto nodes = reader.integer(reader.member(root, "nodes"), 1, kMaxCount);
    SimulationState state;
    state.frame =
        reader.integer(reader.member(root, "frame"), 0, std::numeric_limits<std::int64_t>::max());
    const bool warm = reader.boolean(reader.member(root, "warm_start"));
    if (header.contains("projection_hold")) {
        // Files of sessions 15-21 kept the on-demand projection's hold after a fallback
        // [steps left, hold]; Newton no longer holds projections, so it is checked and dropped.
        const JsonField hold = reader.member(root, "projection_hold");
        if (!hold->is_array() || hold->size() != 2)
            reader.fail(hold, "expected [steps left, hold]");
        constexpr std::int64_t kOldMaxHold = 64; // the cap those sessions held for
        for (int i = 0; i < 2; ++i) reader.integer(reader.element(hold, i), 0, kOldMaxHold);
    }
    const JsonField settings = reader.member(root, "settings");
    reader.expect_object(settings, {"order", "material", "time", "solver", "ground"});
    read_settings_json(reader, settings, state.settings);
    if (header.contains("drag") && !header["drag"].is_null())
        state.drag = read_drag(reader, reader.member(root, "drag"));

    const std::vector<double> rest = r.array<double>(3 * vertices, "rest positions");
    state.mesh.positions.resize(static_cast<std::size_t>(vertices));
    for (std::size_t v = 0; v < state.mesh.positions.size(); ++v)
        for (int d = 0; d < 3; ++d) {
            state.mesh.positions[v][d] = rest[3 * v + d];
            if (!std::isfinite(rest[3 * v + d]))
                bad(source, "rest position of vertex " + std::to_string(v + 1) + " not finite");
        }
    const std::vector<Index> cell_indices = r.array<Index>(4 * cells, "cells");
    state.mesh.cells.resize(static_cast<std::size_t>(cells));
    for (std::size_t t = 0; t < state.mesh.cells.size(); ++t)
        for (int k = 0; k < 4; ++k) {
            const Index v = cell_indices[4 * t + k];
            if (v < 0 || v >= vertices)
                bad(source, "cell " + std::to_string(t + 1) + " names vertex " +
                                std::to_string(static_cast<std::int64_t>(v) + 1) + ", not in 1.." +
                                std::to_string(vertices));
            state.mesh.cells[t][k] = v;
        }
    state.positions = r.array<double>(3 * nodes, "positions");
    state.velocities = r.array<double>(3 * nodes, "velocities");
    state.pinned = r.array<std::uint8_t>(nodes, "pins");
    state.memory.strain_at_x = r.value<double>("solver memory");
    state.memory.kinetic_at_x = r.value<double>("solver memory");
    if (warm) state.memory.warm_start = r.array<double>(3 * nodes, "warm start");
    r.value<std::uint64_t>("checksum");
    if (r.offset() != bytes.size())
        bad(source,
            "state file has " + std::to_string(bytes.size() - r.offset()) + " bytes after its end");
    return state;
}

} // namespace edn
