#include "sim/json_fields.hpp"

#include "core/error.hpp"

#include <cmath>
#include <sstream>

namespace edn {

JsonField JsonFieldReader::member(const JsonField& object, const std::string& key) const {
    std::string token;
    for (char c : key) token += c == '~' ? std::string("~0") : c == '/' ? "~1" : std::string(1, c);
    return {&object->at(key), object.pointer + "/" + token,
            object.name.empty() ? key : object.name + "." + key};
}

JsonField JsonFieldReader::element(const JsonField& array, std::size_t index) const {
    return {&array->at(index), array.pointer + "/" + std::to_string(index),
            array.name + "[" + std::to_string(index) + "]"};
}

std::string JsonFieldReader::where(const JsonField& field) const {
    std::string text = source_;
    if (lines_) {
        // The value's own line, else the nearest enclosing value's.
        std::string pointer = field.pointer;
        for (;;) {
            const auto found = lines_->find(pointer);
            if (found != lines_->end()) {
                text += ':';
                text += std::to_string(found->second);
                break;
            }
            if (pointer.empty()) break;
            pointer.erase(pointer.rfind('/'));
        }
    }
    if (!field.name.empty()) {
        text += ": ";
        text += field.name;
    }
    return text;
}

void JsonFieldReader::fail(const JsonField& field, const std::string& problem) const {
    throw Error(ErrorCode::Parse, where(field) + ": " + problem);
}

void JsonFieldReader::expect_object(const JsonField& field,
                                    std::initializer_list<std::string_view> keys) const {
    if (!field->is_object())
        fail(field, std::string("expected an object, got ") + json_type_name(*field));
    for (const auto& [key, value] : field->items()) {
        bool known = false;
        for (std::string_view k : keys) known = known || k == key;
        if (known) continue;
        std::string expected;
        for (std::string_view k : keys) expected += (expected.empty() ? "" : ", ") + std::string(k);
        fail(member(field, key), "unknown key (expected " + expected + ")");
    }
}

void JsonFieldReader::expect_array(const JsonField& field) const {
    if (!field->is_array())
        fail(field, std::string("expected an array, got ") + json_type_name(*field));
}

double JsonFieldReader::number(const JsonField& field) const {
    if (!field->is_number())
        fail(field, std::string("expected a number, got ") + json_type_name(*field));
    const double value = field->get<double>();
    if (!std::isfinite(value)) fail(field, "expected a finite number");
    return value;
}

double JsonFieldReader::number_in(const JsonField& field, double min, double max) const {
    const double value = number(field);
    if (value < min || value > max) {
        std::ostringstream message;
        message << value << " is out of range [" << min << ", " << max << "]";
        fail(field, message.str());
    }
    return value;
}

std::int64_t JsonFieldReader::integer(const JsonField& field, std::int64_t min,
                                      std::int64_t max) const {
    const double value = number(field);
    if (value != std::floor(value) || value < static_cast<double>(min) ||
        value > static_cast<double>(max)) {
        std::ostringstream message;
        message << "expected an integer in [" << min << ", " << max << "], got " << value;
        fail(field, message.str());
    }
    return field->is_number_integer() ? field->get<std::int64_t>()
                                      : static_cast<std::int64_t>(value);
}

bool JsonFieldReader::boolean(const JsonField& field) const {
    if (!field->is_boolean())
        fail(field, std::string("expected true or false, got ") + json_type_name(*field));
    return field->get<bool>();
}

const std::string& JsonFieldReader::string(const JsonField& field) const {
    if (!field->is_string())
        fail(field, std::string("expected a string, got ") + json_type_name(*field));
    return field->get_ref<const std::string&>();
}

Vec3 JsonFieldReader::vec3(const JsonField& field) const {
    if (!field->is_array() || field->size() != 3) fail(field, "expected an array of 3 numbers");
    Vec3 out{};
    for (std::size_t i = 0; i < 3; ++i) out[i] = number(element(field, i));
    return out;
}

} // namespace edn
