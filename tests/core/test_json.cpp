// core/json: the one JSON reader and writer. Escaping, number text (shortest round trip, %.Ng,
// NaN/inf as null), the Lines layout the CLI and bench contracts rely on, key order, and parse
// errors naming file, line and column.

#include "core/error.hpp"
#include "core/json.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <limits>
#include <unistd.h>

namespace edn {
namespace {

/// The message of the edn::Error that `parse_json(text, "in.json")` throws ("" when none).
std::string parse_error(const std::string& text) {
    try {
        parse_json(text, "in.json");
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), ErrorCode::Parse);
        return error.what();
    }
    return "";
}

TEST(Json, StringsAreEscaped) {
    const std::string raw = std::string("q\"b\\n\nr\rt\t") + char(1) + "\xc3\xa9";
    EXPECT_EQ(to_json_text(Json(raw)), R"("q\"b\\n\nr\rt\t\u0001)"
                                       "\xc3\xa9\"");
    // Invalid UTF-8 must not abort an output: replaced by U+FFFD.
    EXPECT_EQ(to_json_text(Json(std::string("a\xff"))), "\"a\xef\xbf\xbd\"");
    // Keys too.
    EXPECT_EQ(to_json_text(JsonObject().add("a\"b", 1).json(), {JsonLayout::Compact}),
              R"({"a\"b":1})");
}

TEST(Json, RealsRoundTripAndNonFiniteIsNull) {
    for (const double x : {0.1, 1.0 / 3.0, 1e-300, 6.02214076e23, -2.5, 1e5}) {
        const std::string text = to_json_text(Json(x));
        EXPECT_EQ(std::stod(text), x) << text;
        EXPECT_EQ(parse_json(text, "x").get<double>(), x) << text;
    }
    EXPECT_EQ(to_json_text(Json(0.5)), "0.5");
    EXPECT_EQ(to_json_text(Json(std::nan(""))), "null");
    EXPECT_EQ(to_json_text(Json(std::numeric_limits<double>::infinity())), "null");
    EXPECT_EQ(to_json_text(Json(-std::numeric_limits<double>::infinity()), {JsonLayout::Lines, 6}),
              "null");
    // Six significant digits, as printf.
    EXPECT_EQ(to_json_text(Json(1.0 / 3.0), {JsonLayout::Compact, 6}), "0.333333");
    EXPECT_EQ(to_json_text(Json(1234567.0), {JsonLayout::Compact, 6}), "1.23457e+06");
    // Integers stay integers, whatever the digits.
    EXPECT_EQ(to_json_text(Json(std::int64_t(1) << 40), {JsonLayout::Compact, 6}), "1099511627776");
    EXPECT_EQ(to_json_text(Json(std::size_t(7))), "7");
    EXPECT_EQ(to_json_text(Json(-3)), "-3");
    EXPECT_EQ(to_json_text(Json(true)), "true");
}

TEST(Json, ObjectsKeepInsertionOrder) {
    JsonObject object;
    object.add("z", 1).add("a", 2).add("m", "text");
    EXPECT_EQ(to_json_text(object.json(), {JsonLayout::Compact}), R"({"z":1, "a":2, "m":"text"})");
    EXPECT_EQ(to_json_text(Json::object()), "{}");
    EXPECT_EQ(to_json_text(Json::array()), "[]");
    EXPECT_TRUE(JsonObject().empty());
}

TEST(Json, LinesLayoutPutsMembersAndRecordsOnTheirOwnLines) {
    const JsonObject times = JsonObject().add("pcg", 1.5).add("total", 2.0);
    const std::vector<JsonObject> frames = {JsonObject().add("frame", 0).add("ms", times),
                                            JsonObject().add("frame", 1).add("ms", times)};
    JsonObject run;
    run.add("mesh", "m.node")
        .add("settings", JsonObject().add("order", 2).add("cg_tol", 1e-4))
        .add("frames", frames)
        .add("cuts", Json::array())
        .add("lower", std::vector<double>{0.0, -1.5, 2.0});
    EXPECT_EQ(to_json_text(run.json()), "{\n"
                                        "  \"mesh\": \"m.node\",\n"
                                        "  \"settings\": {\"order\":2, \"cg_tol\":1e-04},\n"
                                        "  \"frames\": [\n"
                                        "    {\"frame\":0, \"ms\":{\"pcg\":1.5, \"total\":2}},\n"
                                        "    {\"frame\":1, \"ms\":{\"pcg\":1.5, \"total\":2}}\n"
                                        "  ],\n"
                                        "  \"cuts\": [],\n"
                                        "  \"lower\": [0, -1.5, 2]\n"
                                        "}");
    // What is written reads back to the same document.
    EXPECT_EQ(parse_json(to_json_text(run.json()), "x"), run.json());
}

TEST(Json, ParseErrorsNameFileLineAndColumn) {
    EXPECT_EQ(parse_error("{\"a\": 1}"), "");
    const std::string truncated = parse_error("{\"actions\": [\n  {\"frame\": 1,\n");
    EXPECT_EQ(truncated.rfind("in.json:3:1: ", 0), 0u) << truncated;
    const std::string bad_literal = parse_error("{\n  \"a\": tru }");
    EXPECT_EQ(bad_literal.rfind("in.json:2:", 0), 0u) << bad_literal;
    EXPECT_EQ(bad_literal.find("json.exception"), std::string::npos) << bad_literal;
    EXPECT_EQ(bad_literal.find('\n'), std::string::npos) << bad_literal;
    const std::string duplicate = parse_error("{\"a\": 1,\n \"a\": 2}");
    EXPECT_EQ(duplicate.rfind("in.json:2:", 0), 0u) << duplicate;
    EXPECT_NE(duplicate.find("duplicate key \"a\""), std::string::npos) << duplicate;
    EXPECT_NE(parse_error("{} {}"), "");
    EXPECT_NE(parse_error(std::string(65, '[') + std::string(65, ']')).find("nesting"),
              std::string::npos);
    EXPECT_EQ(parse_error(std::string(64, '[') + std::string(64, ']')), "");
}

TEST(Json, LinesLocateEveryValue) {
    JsonLines lines;
    const Json root = parse_json("{\"actions\": [\n"
                                 "  {\"frame\": 1},\n"
                                 "\n"
                                 "  {\"frame\": 2,\n"
                                 "   \"a/b\": [1,\n"
                                 "     2.5]}\n"
                                 "]}",
                                 "in.json", &lines);
    EXPECT_EQ(root["actions"][1]["frame"], 2);
    EXPECT_EQ(lines.at(""), 1);
    EXPECT_EQ(lines.at("/actions"), 1);
    EXPECT_EQ(lines.at("/actions/0"), 2);
    EXPECT_EQ(lines.at("/actions/0/frame"), 2);
    EXPECT_EQ(lines.at("/actions/1"), 4);
    EXPECT_EQ(lines.at("/actions/1/a~1b"), 5);
    EXPECT_EQ(lines.at("/actions/1/a~1b/0"), 5);
    EXPECT_EQ(lines.at("/actions/1/a~1b/1"), 6);
}

TEST(Json, FilesAreWrittenAtomicallyAndReadBack) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("edn_json_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::filesystem::path path = dir / "out.json";
    const Json document = JsonObject().add("a", 1).add("b", std::vector<int>{1, 2}).json();
    write_json_file(path, document);
    EXPECT_EQ(read_json_file(path), document);
    try {
        read_json_file(dir / "missing.json");
        ADD_FAILURE() << "no error for a missing file";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), ErrorCode::Io);
        EXPECT_NE(std::string(error.what()).find("missing.json"), std::string::npos);
    }
    std::ofstream(dir / "bad.json") << "{\"a\":\n";
    try {
        read_json_file(dir / "bad.json");
        ADD_FAILURE() << "no error for a truncated file";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), ErrorCode::Parse);
        EXPECT_EQ(std::string(error.what()).rfind((dir / "bad.json").string() + ":2:", 0), 0u)
            << error.what();
    }
    std::filesystem::remove_all(dir);
}

TEST(Json, TypeNames) {
    EXPECT_STREQ(json_type_name(Json()), "null");
    EXPECT_STREQ(json_type_name(Json(true)), "boolean");
    EXPECT_STREQ(json_type_name(Json(1)), "number");
    EXPECT_STREQ(json_type_name(Json(1.5)), "number");
    EXPECT_STREQ(json_type_name(Json("s")), "string");
    EXPECT_STREQ(json_type_name(Json::array()), "array");
    EXPECT_STREQ(json_type_name(Json::object()), "object");
}

} // namespace
} // namespace edn
