// elastodyn-cli: the scriptable interface of DESIGN.md ("Scriptable interface"). Exit codes:
// 0 success, 2 usage error, 3 bad input, 4 resource or internal error; every failure is one line
// "elastodyn-cli: error: ..." on stderr.

#include "cli/commands.hpp"
#include "core/error.hpp"

#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

namespace {

constexpr const char* version = "0.1.0";

/// Prints the one-line error; newlines inside `message` are flattened to keep it one line.
void print_error(std::string message) {
    for (char& c : message)
        if (c == '\n' || c == '\r') c = ' ';
    std::cout.flush();
    std::cerr << "elastodyn-cli: error: " << message << std::endl;
}

/// The program-level usage text.
std::string usage() {
    std::string text = "usage: elastodyn-cli COMMAND [ARGS] [--help]\ncommands:\n";
    for (const edn::cli::Command& command : edn::cli::commands())
        text += std::string("  ") + command.name + " " + command.synopsis + "\n";
    text += "  --help     show this text\n  --version  print the version\n";
    text += "exit codes: 0 success, 2 usage error, 3 bad input, 4 resource or internal error\n";
    return text;
}

int dispatch(const std::vector<std::string>& arguments) {
    if (arguments.empty()) {
        std::cerr << usage();
        return 2;
    }
    const std::string& name = arguments[0];
    if (name == "--help" || name == "-h" || name == "help") {
        std::cout << usage();
        return 0;
    }
    if (name == "--version") {
        std::cout << "elastodyn-cli " << version << "\n";
        return 0;
    }
    for (const edn::cli::Command& command : edn::cli::commands())
        if (name == command.name)
            return command.run(std::vector<std::string>(arguments.begin() + 1, arguments.end()));
    edn::cli::usage_error("unknown command '" + name + "' (try --help)");
}

} // namespace

int main(int argc, char** argv) {
    try {
        return dispatch(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const edn::Error& error) {
        print_error(error.what());
        return edn::exit_code_for(error.code());
    } catch (const std::bad_alloc&) {
        print_error("out of memory");
        return 4;
    } catch (const std::exception& error) {
        print_error(std::string("internal error: ") + error.what());
        return 4;
    } catch (...) {
        print_error("internal error: unknown exception");
        return 4;
    }
}
