#pragma once
/// A small command-line parser shared by the elastodyn-cli commands: `--name value`,
/// `--name=value`, flags, positionals, `--` and `--help`. Every problem throws
/// edn::Error(ErrorCode::Usage) with a one-line message, which main() turns into exit code 2.

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace edn::cli {

/// One option a command accepts.
struct OptionSpec {
    std::string name;       ///< without the leading "--", e.g. "quality"
    std::string value_name; ///< e.g. "Q" for `--quality Q`; empty for a flag such as --verbose
    std::string help;       ///< one line for the command's usage text

    /// Whether the option needs a value.
    bool takes_value() const { return !value_name.empty(); }
};

/// The parsed command line of one command.
class Args {
public:
    /// Parses `arguments` (everything after the command name) against `options`.
    Args(std::string command, const std::vector<std::string>& arguments,
         std::vector<OptionSpec> options);

    /// True when --help or -h was given (nothing else is checked then).
    bool help_requested() const { return help_; }
    /// The positional arguments, in order.
    const std::vector<std::string>& positionals() const { return positionals_; }
    /// Throws unless exactly names.size() positionals were given; names appear in the message.
    void expect_positionals(const std::vector<std::string>& names) const;

    /// True when option `name` was given (flag or valued option).
    bool has(const std::string& name) const;
    /// The value of a flag.
    bool flag(const std::string& name) const { return has(name); }
    /// The value of `name`, or `fallback` when absent.
    std::string string_or(const std::string& name, const std::string& fallback) const;
    /// A finite real in [min, max], or `fallback` when absent.
    double real_or(const std::string& name, double fallback, double min, double max) const;
    /// An integer in [min, max], or `fallback` when absent.
    long long integer_or(const std::string& name, long long fallback, long long min,
                         long long max) const;

    /// Usage text: "usage: elastodyn-cli <command> <synopsis>" plus one line per option.
    std::string usage(const std::string& synopsis) const;

    /// The command name (for messages).
    const std::string& command() const { return command_; }

private:
    const OptionSpec* find_spec(const std::string& name) const;
    std::optional<std::string> value(const std::string& name) const;

    std::string command_;
    std::vector<OptionSpec> specs_;
    std::vector<std::pair<std::string, std::string>> given_; ///< option name, value ("" for flags)
    std::vector<std::string> positionals_;
    bool help_ = false;
};

/// Throws edn::Error(Usage) with `message`.
[[noreturn]] void usage_error(const std::string& message);

} // namespace edn::cli
