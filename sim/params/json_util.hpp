// napisim: JSON helpers shared by the scenario loader, the CLI and the parameter structs.
//
// Every failure here is the user's fault and is reported as a ConfigError whose path is the JSON
// pointer (RFC 6901) of the offending value, "/" for the document itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/json.hpp"

namespace napisim {

/// Deepest object/array nesting a scenario may have. Later passes (includes, --set, strict checks,
/// copies) recurse per level, so parse_json_text() and --set values stop here with a ConfigError
/// instead of exhausting the stack; the Python package applies the same limit (MAX_NESTING).
inline constexpr std::size_t kMaxJsonNesting = 256;

/// Largest JSON file load_json_file() reads (a scenario, an included file, a calibration targets or
/// trace-gen spec file): a hand-written scenario is a few KiB, and a larger read would only delay
/// the error (or, from /dev/zero, never end). The Python package applies the same limit.
inline constexpr std::size_t kMaxJsonFileBytes = std::size_t{8} << 20;

/// Most elements of an array field that declares no tighter MaxItems (sim/params/fields.hpp): every
/// array is bounded before its elements are checked, so a long one is an error, not a long wait.
inline constexpr std::size_t kMaxArrayItems = 4096;

/// Parses `text` strictly, in time linear in its size. Syntax errors become ConfigError("/", "<source_name>: invalid
/// JSON at line L, column C: <reason>"); a number beyond a double's range becomes ConfigError("/a/b", "<source_name>:
/// invalid JSON at line L, column C: number overflow ..."); a key repeated inside one object becomes
/// ConfigError("/a/b", "duplicate key in <source_name>") (nlohmann would silently keep the last value).
Json parse_json_text(std::string_view text, const std::string& source_name);

/// Reads and parses a JSON file of at most kMaxJsonFileBytes. An unreadable file becomes
/// ConfigError("/", "cannot read scenario file '<file>': <strerror>"), a larger one (or an endless one such as
/// /dev/zero) ConfigError("/", "scenario file '<file>' is larger than the limit of 8 MiB ...") once the limit is read.
Json load_json_file(const std::string& file);

/// Reads `file` in chunks (pipes and devices too), passing each to `chunk`, and stops after `max_bytes`: returns
/// false if the file has more. An unreadable file (a directory included) becomes
/// ConfigError(pointer, "cannot read <what> '<file>': <strerror>").
bool read_file_bounded(const std::string& file, std::size_t max_bytes,
                       const std::function<void(std::string_view)>& chunk, const std::string& pointer,
                       const std::string& what);

/// "8 MiB (8388608 bytes)": a byte limit for messages.
std::string byte_limit_text(std::size_t bytes);

/// Applies one CLI `--set path=value` to `doc`.
/// path: a JSON pointer ("/nics/0/rx_queues") or dotted ("nics.0.rx_queues"; use the pointer form for keys with dots).
/// value: parsed as JSON if it parses (8, true, null, "x", [1,2], {"a":1}), otherwise taken as a plain string.
/// Missing object members are created (the strict parameter parse rejects unknown ones later, with a suggestion);
/// array indices must exist, or be "-" to append.
void apply_set(Json& doc, std::string_view assignment);

/// `base` + "/" + `key` with RFC 6901 escaping ("~" -> "~0", "/" -> "~1"). `base` "" or "/" means the document.
std::string json_pointer_append(const std::string& base, std::string_view key);
std::string json_pointer_append(const std::string& base, std::size_t index);

/// A short description of a value for error messages: `string "8"`, `number 0`, `boolean true`, `array`, `object`,
/// `null`. Long strings are truncated.
std::string describe_json_value(const Json& v);

/// Shortest text that round-trips: integral values print without a fraction (10000, not 1e+04 or 10000.0).
std::string format_number(double x);

namespace detail {

// Non-template cores of sim/params/fields.hpp, kept out of the header so that each parameter struct instantiates
// only thin dispatch code. `lo`/`hi` are the declared Range (+-inf when absent); `nullable` adds " or null" to
// type errors (std::optional fields).
std::string bounds_text(double lo, double hi);                    // "[1, 1024]", ">= 1", "<= 5" or ""
std::string quoted_list(const std::vector<std::string>& values);  // "a", "b"
std::string int_list(const std::vector<std::int64_t>& values);    // 100, 250
/// An enumerated integer's check: ConfigError "expected one of 100, 250, got 500" unless v is allowed.
void check_int_choice(std::int64_t v, const std::vector<std::int64_t>& allowed, const std::string& path);
std::size_t edit_distance(std::string_view a, std::string_view b);  // optimal string alignment, case-insensitive
[[noreturn]] void throw_type_error(const std::string& path, std::string_view expected, bool nullable, const Json& got);
[[noreturn]] void throw_unknown_key(const std::string& key_path, const std::string& key,
                                    const std::vector<std::string>& known);
bool parse_bool(const Json& j, const std::string& path, bool nullable);
std::int64_t parse_signed(const Json& j, const std::string& path, std::int64_t type_min, std::int64_t type_max,
                          double lo, double hi, bool nullable);
std::uint64_t parse_unsigned(const Json& j, const std::string& path, std::uint64_t type_max, double lo, double hi,
                             bool nullable);
double parse_double(const Json& j, const std::string& path, double lo, double hi, bool nullable);
std::string parse_string(const Json& j, const std::string& path, const std::vector<std::string>* choices,
                         bool nullable);

}  // namespace detail
}  // namespace napisim
