#pragma once
// Checking the errors the engine throws: code, message fragment, one line.

#include "core/error.hpp"

#include <functional>
#include <gtest/gtest.h>
#include <string>

namespace edn::test {

/// Runs `action`, expecting edn::Error with `code` and a one-line message containing `fragment`.
inline void expect_error(const std::function<void()>& action, ErrorCode code,
                         const std::string& fragment) {
    try {
        action();
        ADD_FAILURE() << "no error thrown, expected " << error_code_name(code);
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), code) << e.what();
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
            << "message '" << e.what() << "' lacks '" << fragment << "'";
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "message is one line";
    }
}

} // namespace edn::test
