#include "cli/args.hpp"

#include "core/error.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <utility>

namespace edn::cli {

void usage_error(const std::string& message) {
    throw Error(ErrorCode::Usage, message);
}

Args::Args(std::string command, const std::vector<std::string>& arguments,
           std::vector<OptionSpec> options)
    : command_(std::move(command)), specs_(std::move(options)) {
    bool options_ended = false;
    for (std::size_t i = 0; i < arguments.size(); ++i) {
        const std::string& argument = arguments[i];
        if (options_ended || argument.size() < 2 || argument[0] != '-') {
            positionals_.push_back(argument); // "-" alone is a positional (conventionally stdin)
            continue;
        }
        if (argument == "--") {
            options_ended = true;
            continue;
        }
        if (argument == "--help" || argument == "-h") {
            help_ = true;
            continue;
        }
        if (argument.rfind("--", 0) != 0)
            usage_error(command_ + ": unknown option '" + argument + "' (options start with --)");
        std::string name = argument.substr(2);
        std::optional<std::string> inline_value;
        if (const auto eq = name.find('='); eq != std::string::npos) {
            inline_value = name.substr(eq + 1);
            name.resize(eq);
        }
        const OptionSpec* spec = find_spec(name);
        if (spec == nullptr) usage_error(command_ + ": unknown option '--" + name + "'");
        if (has(name)) usage_error(command_ + ": option '--" + name + "' given twice");
        std::string value;
        if (spec->takes_value()) {
            if (inline_value) {
                value = *inline_value;
            } else {
                // The next argument is the value even if it starts with '-' (negative numbers).
                if (i + 1 >= arguments.size())
                    usage_error(command_ + ": option '--" + name + "' needs a value");
                value = arguments[++i];
            }
        } else if (inline_value) {
            usage_error(command_ + ": option '--" + name + "' takes no value");
        }
        given_.emplace_back(name, value);
    }
}

void Args::expect_positionals(const std::vector<std::string>& names) const {
    if (positionals_.size() == names.size()) return;
    std::ostringstream message;
    if (positionals_.size() < names.size()) {
        message << command_ << ": missing argument " << names[positionals_.size()];
    } else {
        message << command_ << ": unexpected argument '" << positionals_[names.size()] << "'";
    }
    usage_error(message.str());
}

const OptionSpec* Args::find_spec(const std::string& name) const {
    for (const OptionSpec& spec : specs_)
        if (spec.name == name) return &spec;
    return nullptr;
}

bool Args::has(const std::string& name) const {
    for (const auto& [given, value] : given_)
        if (given == name) return true;
    return false;
}

std::optional<std::string> Args::value(const std::string& name) const {
    for (const auto& [given, value] : given_)
        if (given == name) return value;
    return std::nullopt;
}

std::string Args::string_or(const std::string& name, const std::string& fallback) const {
    return value(name).value_or(fallback);
}

double Args::real_or(const std::string& name, double fallback, double min, double max) const {
    const std::optional<std::string> text = value(name);
    if (!text) return fallback;
    const std::string prefix = command_ + ": option '--" + name + "': ";
    errno = 0;
    char* end = nullptr;
    const double number = std::strtod(text->c_str(), &end);
    // Decimal only: strtod also reads hexadecimal ("0x10"), which no user means by --E.
    const bool decimal = text->find_first_not_of("0123456789+-.eE") == std::string::npos;
    if (text->empty() || end != text->c_str() + text->size() || !decimal)
        usage_error(prefix + "'" + *text + "' is not a number");
    if (!std::isfinite(number) || errno == ERANGE)
        usage_error(prefix + "'" + *text + "' is not a finite number");
    if (number < min || number > max) {
        std::ostringstream message;
        message << prefix << *text << " is out of range [" << min << ", " << max << "]";
        usage_error(message.str());
    }
    return number;
}

long long Args::integer_or(const std::string& name, long long fallback, long long min,
                           long long max) const {
    const std::optional<std::string> text = value(name);
    if (!text) return fallback;
    const std::string prefix = command_ + ": option '--" + name + "': ";
    errno = 0;
    char* end = nullptr;
    const long long number = std::strtoll(text->c_str(), &end, 10);
    if (text->empty() || end != text->c_str() + text->size() || errno == ERANGE)
        usage_error(prefix + "'" + *text + "' is not an integer");
    if (number < min || number > max) {
        std::ostringstream message;
        message << prefix << number << " is out of range [" << min << ", " << max << "]";
        usage_error(message.str());
    }
    return number;
}

std::string Args::usage(const std::string& synopsis) const {
    std::ostringstream text;
    text << "usage: elastodyn-cli " << command_ << " " << synopsis << "\n";
    if (!specs_.empty()) text << "options:\n";
    auto line = [&](const std::string& left, const std::string& help) {
        text << "  " << left << std::string(left.size() < 18 ? 18 - left.size() : 1, ' ') << help
             << "\n";
    };
    for (const OptionSpec& spec : specs_)
        line("--" + spec.name + (spec.takes_value() ? " " + spec.value_name : ""), spec.help);
    line("--help", "show this text");
    return text.str();
}

} // namespace edn::cli
