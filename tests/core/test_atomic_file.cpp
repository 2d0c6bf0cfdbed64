// OutputFiles: nothing is published before commit(), nothing is left behind without it, and no
// output may name an input or another output.

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "support/files.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace edn {
namespace {

namespace fs = std::filesystem;

/// A fresh temporary directory, removed at the end of the test.
struct TempDir : test::TempDir {
    TempDir() : test::TempDir("edn_atomic_file_test") {}
};

using test::write_text;

TEST(OutputFiles, PublishesAllTogetherOnCommitOnly) {
    const TempDir dir;
    write_text(dir.path / "a.txt", "old a");
    {
        OutputFiles outputs;
        const fs::path a = outputs.add(dir.path / "a.txt", "--a");
        const fs::path b = outputs.add(dir.path / "b.txt", "--b");
        EXPECT_EQ(a.parent_path(), dir.path); // beside the target: the rename is atomic
        write_text(a, "new a");
        write_text(b, "new b");
        EXPECT_EQ(test::read_text(dir.path / "a.txt"), "old a");
        EXPECT_FALSE(fs::exists(dir.path / "b.txt"));
        // Destroyed without commit (a later step failed): the old file stays, no temporaries.
    }
    EXPECT_EQ(test::read_text(dir.path / "a.txt"), "old a");
    EXPECT_EQ(dir.entries(), 1u);
    {
        OutputFiles outputs;
        write_text(outputs.add(dir.path / "a.txt", "--a"), "new a");
        write_text(outputs.add(dir.path / "b.txt", "--b"), "new b");
        outputs.commit();
    }
    EXPECT_EQ(test::read_text(dir.path / "a.txt"), "new a");
    EXPECT_EQ(test::read_text(dir.path / "b.txt"), "new b");
    EXPECT_EQ(dir.entries(), 2u);
}

TEST(OutputFiles, RejectsCollisionsAndUnwritableTargets) {
    const TempDir dir;
    write_text(dir.path / "in.node", "mesh");
    auto code_of = [](const std::function<void()>& body) {
        try {
            body();
        } catch (const Error& error) {
            return std::string(error_code_name(error.code()));
        }
        return std::string("none");
    };
    OutputFiles outputs;
    outputs.add_input(dir.path / "in.node", "MESH");
    EXPECT_EQ(code_of([&] { outputs.add(dir.path / "." / "in.node", "--x"); }), "usage");
    fs::create_hard_link(dir.path / "in.node", dir.path / "hard.node");
    EXPECT_EQ(code_of([&] { outputs.add(dir.path / "hard.node", "--x"); }), "usage");
    outputs.add(dir.path / "K.mtx", "--matrix");
    EXPECT_EQ(code_of([&] { outputs.add(dir.path / "K.mtx", "--force"); }), "usage");
    fs::create_directory(dir.path / "d.txt");
    EXPECT_EQ(code_of([&] { outputs.add(dir.path / "d.txt", "--force"); }), "io");
    EXPECT_EQ(code_of([&] { outputs.add(dir.path / "missing" / "f.txt", "--force"); }), "io");
    ASSERT_EQ(::mkfifo((dir.path / "pipe.txt").c_str(), 0600), 0);
    EXPECT_EQ(code_of([&] { outputs.add(dir.path / "pipe.txt", "--force"); }), "io");
    // write_file_atomically refuses to replace a non-regular file as well.
    EXPECT_EQ(code_of([&] {
                  write_file_atomically(dir.path / "pipe.txt", [](std::ostream& out) { out << 1; });
              }),
              "io");
    EXPECT_TRUE(fs::is_fifo(dir.path / "pipe.txt"));
}

} // namespace
} // namespace edn
