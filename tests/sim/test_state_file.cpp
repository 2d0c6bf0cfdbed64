// State files (sim/state_file.hpp): save, load and step N equals step N without the round trip,
// bit for bit on the CPU, also after a drag, a cut and a refinement, at orders 1 and 2; a
// truncated, corrupt or foreign file is one line naming it.

#include "core/error.hpp"
#include "mesh/box_mesh.hpp"
#include "mesh/cut.hpp"
#include "sim/drag_region.hpp"
#include "sim/state_file.hpp"
#include "support/files.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <string>

namespace edn {
namespace {

namespace fs = std::filesystem;

/// A pinned beam that was dragged, cut and refined: every kind of state a session builds up.
std::unique_ptr<Simulation> worked_simulation(int order) {
    SimulationSettings settings;
    settings.order = order;
    settings.dt = 0.01;
    settings.gravity = {0, 4, -9.81};
    settings.mass_damping = 0.1;
    settings.ground_height = -0.05;
    settings.ground_friction = 0.5;
    auto sim = std::make_unique<Simulation>(make_box_tet_mesh(2, 2, 5, {0, 0, 0}, {0.2, 0.2, 0.5}),
                                            settings);
    sim->pin_below(0.01);
    for (int i = 0; i < 2; ++i) sim->step();
    DragSpring drag = make_drag(*sim, {30, 30, 30}, {1, 0, 0}, 0.08, 500);
    drag.target[1] += 0.05;
    sim->set_drag(drag);
    sim->step();
    sim->cut(CutPlane{{0, 0, 0.25}, {0, 0.3, 1}});
    sim->step();
    sim->refine_sphere({0.1, 0.1, 0.45}, 0.1, 2);
    sim->step();
    // A topology change drops the drag: grab again.
    drag = make_drag(*sim, {30, 30, 30}, {1, 0, 0}, 0.08, 500);
    drag.target[0] += 0.05;
    sim->set_drag(drag);
    sim->step();
    return sim;
}

class StateFile : public ::testing::TestWithParam<int> {
protected:
    test::TempDir dir_{"edn_state_file"};
};

TEST_P(StateFile, ResumedRunStepsBitForBitAsTheOriginal) {
    std::unique_ptr<Simulation> original = worked_simulation(GetParam());
    ASSERT_GE(original->topology_changes().size(), 2u);
    ASSERT_TRUE(original->drag());
    const fs::path file = dir_.path / "state.edns";
    write_state_file(file, capture_state(*original));
    std::unique_ptr<Simulation> resumed = restore_simulation(read_state_file(file), file.string());
    EXPECT_EQ(resumed->frame(), original->frame());
    EXPECT_EQ(resumed->mesh().cells, original->mesh().cells);
    EXPECT_EQ(resumed->positions(), original->positions());
    EXPECT_EQ(resumed->pinned(), original->pinned());
    for (int i = 0; i < 4; ++i) {
        const StepResult a = original->step();
        const StepResult b = resumed->step();
        EXPECT_EQ(a.cg_iterations, b.cg_iterations) << "step " << i;
        EXPECT_EQ(a.residuals, b.residuals) << "step " << i;
        ASSERT_EQ(original->positions(), resumed->positions()) << "step " << i;
        ASSERT_EQ(original->velocities(), resumed->velocities()) << "step " << i;
    }
    // Release the drag and go on: the resumed one holds the same drag.
    original->set_drag(std::nullopt);
    resumed->set_drag(std::nullopt);
    original->step();
    resumed->step();
    EXPECT_EQ(original->positions(), resumed->positions());
    // Written again, the same bytes.
    const fs::path again = dir_.path / "again.edns";
    write_state_file(again, capture_state(*resumed));
    write_state_file(file, capture_state(*original));
    EXPECT_TRUE(test::read_text(file) == test::read_text(again));
}

INSTANTIATE_TEST_SUITE_P(Orders, StateFile, ::testing::Values(1, 2));

/// The message read_state_file throws for a file holding `bytes`.
std::string state_error(const fs::path& file, const std::string& bytes) {
    test::write_text(file, bytes);
    try {
        read_state_file(file);
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), ErrorCode::Parse) << error.what();
        EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos);
        return error.what();
    }
    ADD_FAILURE() << "accepted " << bytes.size() << " bytes";
    return {};
}

TEST(StateFileErrors, AnOlderFilesProjectionHoldIsReadAndDroppedAndAMalformedOneIsOneLine) {
    // Files of sessions 15-21 kept the on-demand projection's hold ("projection_hold": [steps
    // left, hold]); Newton holds none now. Such a file still reads (the member checked and
    // dropped), a malformed one is one line, and new files do not write it.
    const test::TempDir dir("edn_state_hold_errors");
    std::unique_ptr<Simulation> sim = worked_simulation(1);
    const fs::path good = dir.path / "good.edns";
    write_state_file(good, capture_state(*sim));
    const std::string bytes = test::read_text(good);
    EXPECT_EQ(bytes.find("projection_hold"), std::string::npos);
    const std::size_t at = bytes.find('{') + 1; // the header's first member
    const fs::path old = dir.path / "old.edns";
    for (const std::string& value : {std::string("[3,10]"), std::string("[3,99]"),
                                     std::string("[3,-1]"), std::string("[3,\"x\"]"),
                                     std::string("[3,10,1]")}) {
        const std::string member = "\"projection_hold\":" + value + ", ";
        std::string edited = bytes.substr(0, bytes.size() - 8);
        edited.insert(at, member);
        // the header's length (u64 after the magic, version and byte-order mark) and checksum
        std::uint64_t header = 0;
        std::memcpy(&header, edited.data() + 16, sizeof header);
        header += member.size();
        std::memcpy(edited.data() + 16, &header, sizeof header);
        std::uint64_t hash = 14695981039346656037ull; // FNV-1a, as the writer's
        for (const char c : edited)
            hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
        edited.append(reinterpret_cast<const char*>(&hash), sizeof hash);
        if (value == "[3,10]") {
            test::write_text(old, edited);
            const SimulationState state = read_state_file(old);
            EXPECT_EQ(state.positions, read_state_file(good).positions);
            continue;
        }
        const std::string message = state_error(old, edited);
        EXPECT_NE(message.find("projection_hold"), std::string::npos) << value << ": " << message;
    }
}

TEST(StateFileErrors, TruncatedCorruptOrForeignFilesAreOneLine) {
    const test::TempDir dir("edn_state_errors");
    std::unique_ptr<Simulation> sim = worked_simulation(1);
    const fs::path good = dir.path / "good.edns";
    write_state_file(good, capture_state(*sim));
    const std::string bytes = test::read_text(good);
    const fs::path bad = dir.path / "bad.edns";
    const std::string name = bad.string() + ": ";
    for (std::size_t size : {std::size_t{0}, std::size_t{5}, std::size_t{12}, std::size_t{30},
                             bytes.size() / 2, bytes.size() - 9, bytes.size() - 1}) {
        const std::string message = state_error(bad, bytes.substr(0, size));
        EXPECT_EQ(message.rfind(name, 0), 0u) << message;
        EXPECT_TRUE(message.find("truncated") != std::string::npos ||
                    message.find("not an elastodyn state file") != std::string::npos)
            << size << ": " << message;
    }
    for (std::size_t at : {std::size_t{30}, bytes.size() / 2, bytes.size() - 20}) {
        std::string damaged = bytes;
        damaged[at] = static_cast<char>(damaged[at] ^ 0x5a);
        EXPECT_EQ(state_error(bad, damaged), name + "corrupt state file (checksum mismatch)");
    }
    EXPECT_EQ(state_error(bad, "{\"version\": 1}"),
              name + "not an elastodyn state file (no EDNSTATE header)");
    std::string newer = bytes;
    newer[8] = 9;
    EXPECT_EQ(state_error(bad, newer), name + "state file version 9 (this elastodyn reads 1)");
    EXPECT_EQ(state_error(bad, bytes + "x"), name + "corrupt state file (checksum mismatch)");
    try {
        read_state_file(dir.path / "missing.edns");
        ADD_FAILURE() << "a missing file was read";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), ErrorCode::Io);
    }
}

} // namespace
} // namespace edn
