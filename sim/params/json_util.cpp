// napisim: JSON helpers and the non-template cores of the parameter structs (sim/params/fields.hpp).
#include "sim/params/json_util.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <set>

#include "sim/core/error.hpp"
#include "sim/params/fields.hpp"

namespace napisim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::size_t kMaxQuotedChars = 40;  // strings quoted in messages are cut here

// ---- parsing with duplicate-key detection ----

// Builds the document with nlohmann's plain DOM builder and follows the events to know the JSON pointer of every
// value: to bound the nesting, to record the first key repeated inside one object and to say where a number
// overflows. (nlohmann's callback parser, used before, scans the enclosing array for discarded values after
// every object it ends: quadratic in a long array of objects, an hour for a million `changes`.)
class StrictSax {
 public:
  explicit StrictSax(Json& doc) : dom_(doc, /*allow_exceptions=*/false) {}

  bool null() { return scalar(dom_.null()); }
  bool boolean(bool v) { return scalar(dom_.boolean(v)); }
  bool number_integer(Json::number_integer_t v) { return scalar(dom_.number_integer(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return scalar(dom_.number_unsigned(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t& text) { return scalar(dom_.number_float(v, text)); }
  bool string(Json::string_t& v) { return scalar(dom_.string(v)); }
  bool binary(Json::binary_t& v) { return scalar(dom_.binary(v)); }
  bool start_object(std::size_t n) {
    enter(false);
    return dom_.start_object(n);
  }
  bool key(Json::string_t& k) {
    Frame& f = frames_.back();
    f.key = k;
    if (!f.keys.insert(k).second && !duplicate_) duplicate_ = pointer_to(k);
    return dom_.key(k);
  }
  bool end_object() {
    leave();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    enter(true);
    return dom_.start_array(n);
  }
  bool end_array() {
    leave();
    return dom_.end_array();
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& e) {
    error_ = Error{position, token, e.id, e.what(), value_pointer()};
    return false;
  }

  struct Error {
    std::size_t position;  // bytes read when the error was found
    std::string token;
    int id;  // nlohmann's exception id: 406 is a number beyond a double's range
    std::string what;
    std::string pointer;  // of the value being read
  };
  const std::optional<Error>& error() const { return error_; }
  const std::optional<std::string>& duplicate() const { return duplicate_; }

 private:
  struct Frame {
    bool is_array;
    std::size_t next_index;
    std::string key;  // current member of an object
    std::set<std::string> keys;
  };

  bool scalar(bool ok) {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().next_index;
    return ok;
  }

  // A container starts: remember its token inside the parent (none for the document itself).
  void enter(bool is_array) {
    if (!frames_.empty()) {
      Frame& parent = frames_.back();
      tokens_.push_back(parent.is_array ? std::to_string(parent.next_index++) : parent.key);
    }
    if (frames_.size() >= kMaxJsonNesting)
      throw ConfigError(
          pointer(), "nesting deeper than " + std::to_string(kMaxJsonNesting) + " levels (a scenario needs a handful)");
    frames_.push_back(Frame{is_array, 0, {}, {}});
  }
  void leave() {
    frames_.pop_back();
    if (!frames_.empty()) tokens_.pop_back();
  }

  // The JSON pointer of the current container ("" for the document), of one of its members, and of the value
  // being read.
  std::string path() const {
    std::string p;
    for (const auto& t : tokens_)
      p = json_pointer_append(p, t);
    return p;
  }
  std::string pointer() const { return tokens_.empty() ? "/" : path(); }
  std::string pointer_to(const std::string& key) const { return json_pointer_append(path(), key); }
  std::string value_pointer() const {
    if (frames_.empty()) return "/";
    const Frame& f = frames_.back();
    return f.is_array ? json_pointer_append(path(), f.next_index) : pointer_to(f.key);
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  std::vector<Frame> frames_;
  std::vector<std::string> tokens_;
  std::optional<std::string> duplicate_;
  std::optional<Error> error_;
};

// "line L, column C" of byte `offset` of `text` (both from 1).
std::string line_column(std::string_view text, std::size_t offset) {
  const std::string_view before = text.substr(0, offset);
  const std::size_t line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t newline = before.rfind('\n');
  const std::size_t column = newline == std::string_view::npos ? before.size() + 1 : before.size() - newline;
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// "[json.exception.parse_error.101] parse error at line 3, column 1: syntax error ..." ->
// "invalid JSON at line 3, column 1: syntax error ...".
std::string describe_parse_error(const std::string& what) {
  const std::string marker = "parse error at ";
  const std::size_t at = what.find(marker);
  if (at != std::string::npos) {
    const std::size_t colon = what.find(": ", at);
    if (colon != std::string::npos) {
      const std::size_t where = at + std::strlen("parse error ");
      return "invalid JSON " + what.substr(where, colon - where) + ": " + what.substr(colon + 2);
    }
  }
  const std::size_t bracket = what.find("] ");
  return "invalid JSON: " + (bracket == std::string::npos ? what : what.substr(bracket + 2));
}

// ---- --set ----

std::string set_message(const std::string& assignment, const std::string& why) {
  return "--set '" + assignment + "': " + why;
}

// One step of a --set path: a key or an index; `bracketed` when written as key[N] or key[-] (so
// that a missing container before it is an array).
struct SetToken {
  std::string text;
  bool bracketed = false;
};

std::vector<SetToken> split_set_path(std::string_view path, const std::string& assignment) {
  std::vector<SetToken> tokens;
  const auto bad = [&](const std::string& why) { return ConfigError("/", set_message(assignment, why)); };
  if (path.empty()) throw bad("empty path");
  if (path.front() == '/') {
    // RFC 6901: tokens separated by '/', "~1" is '/', "~0" is '~'.
    std::size_t start = 1;
    while (true) {
      const std::size_t end = path.find('/', start);
      const std::string_view raw =
          path.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
      std::string token;
      for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] != '~') {
          token += raw[i];
        } else if (i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
          token += raw[++i] == '0' ? '~' : '/';
        } else {
          throw bad("invalid escape in JSON pointer (use ~0 for '~' and ~1 for '/')");
        }
      }
      tokens.push_back({std::move(token), false});
      if (end == std::string_view::npos) break;
      start = end + 1;
    }
  } else {
    std::size_t start = 0;
    while (true) {
      const std::size_t end = path.find('.', start);
      const std::string_view token =
          path.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
      // A component is a key, optionally followed by array indices in brackets: clients[0], a[1][-].
      const std::size_t open = token.find('[');
      const std::string_view key = token.substr(0, open);
      if (key.empty()) throw bad("empty path component (use a JSON pointer such as /a/b for unusual keys)");
      tokens.push_back({std::string(key), false});
      for (std::size_t i = open; i != std::string_view::npos;) {
        const std::size_t close = token.find(']', i);
        if (token[i] != '[' || close == std::string_view::npos || close == i + 1)
          throw bad("malformed index in '" + std::string(token) + "' (expected key[N] or key[-])");
        tokens.push_back({std::string(token.substr(i + 1, close - i - 1)), true});
        i = close + 1 == token.size() ? std::string_view::npos : close + 1;
      }
      if (end == std::string_view::npos) break;
      start = end + 1;
    }
  }
  return tokens;
}

// RFC 6901 array index: "0" or digits without a leading zero, small enough for size_t.
std::optional<std::size_t> array_index(const std::string& token) {
  if (token.empty() || token.size() > 18) return std::nullopt;
  if (token.size() > 1 && token[0] == '0') return std::nullopt;
  std::size_t v = 0;
  for (char ch : token) {
    if (ch < '0' || ch > '9') return std::nullopt;
    v = v * 10 + static_cast<std::size_t>(ch - '0');
  }
  return v;
}

// Index that `token` selects in array `arr` for --set; "-" selects one past the end (append).
std::size_t set_index(const Json& arr, const std::string& token, const std::string& path, const std::string& whole) {
  if (token == "-") return arr.size();
  const std::optional<std::size_t> index = array_index(token);
  if (!index)
    throw ConfigError(path, set_message(whole, "'" + token + "' is not an array index (use 0, 1, ... or - to append)"));
  if (*index >= arr.size()) {
    throw ConfigError(json_pointer_append(path, *index),
                      set_message(whole, "array index out of range (the array has " + std::to_string(arr.size()) +
                                             " elements; use - to append)"));
  }
  return *index;
}

// ---- numbers ----

// The integral value of a JSON number as sign and magnitude, so that int64 and uint64 fields share one check.
struct Integral {
  bool negative = false;
  std::uint64_t magnitude = 0;
  bool beyond_64_bits = false;
};

std::optional<Integral> integral_value(const Json& j) {
  if (j.is_number_unsigned()) return Integral{false, j.get<std::uint64_t>(), false};
  if (j.is_number_integer()) {
    const std::int64_t i = j.get<std::int64_t>();
    if (i >= 0) return Integral{false, static_cast<std::uint64_t>(i), false};
    return Integral{true, static_cast<std::uint64_t>(-(i + 1)) + 1, false};
  }
  const double d = j.get<double>();
  if (!std::isfinite(d) || d != std::trunc(d)) return std::nullopt;
  if (std::fabs(d) >= 18446744073709551616.0) return Integral{d < 0, 0, true};
  return Integral{d < 0, static_cast<std::uint64_t>(std::fabs(d)), false};
}

// The number as the user wrote it, for "got ..." after a range check.
std::string number_text(const Json& j) {
  return j.is_number_float() ? format_number(j.get<double>()) : j.dump();
}

// "integer in [lo, hi]", "integer >= lo", "integer <= hi" or "integer"; empty texts are open sides.
std::string expectation(const char* kind, const std::string& lo, const std::string& hi) {
  if (!lo.empty() && !hi.empty()) return std::string(kind) + " in [" + lo + ", " + hi + "]";
  if (!lo.empty()) return std::string(kind) + " >= " + lo;
  if (!hi.empty()) return std::string(kind) + " <= " + hi;
  return kind;
}

// Bounds shown for an integer field: the declared range where it is tighter than the type; otherwise the type's own
// limit on a side where the caller asks for it (narrow types, or the side the value broke).
std::string integer_expectation(double lo, double hi, const std::string& type_lo, const std::string& type_hi,
                                double type_lo_d, double type_hi_d, bool show_type_lo, bool show_type_hi) {
  const std::string lo_text = lo > type_lo_d ? format_number(lo) : show_type_lo ? type_lo : "";
  const std::string hi_text = hi < type_hi_d ? format_number(hi) : show_type_hi ? type_hi : "";
  return expectation("integer", lo_text, hi_text);
}

}  // namespace

// ---- public helpers ----

Json parse_json_text(std::string_view text, const std::string& source_name) {
  Json doc;
  StrictSax sax(doc);
  if (!Json::sax_parse(text.begin(), text.end(), &sax)) {
    const StrictSax::Error& e = *sax.error();
    if (e.id != 406) throw ConfigError("/", source_name + ": " + describe_parse_error(e.what));
    // A number literal beyond double's range: nlohmann's message has no position, only the byte offset after it.
    const std::size_t start = e.position >= e.token.size() ? e.position - e.token.size() : 0;
    throw ConfigError(e.pointer, source_name + ": invalid JSON at " + line_column(text, start) +
                                     ": number overflow "
                                     "parsing '" +
                                     e.token + "' (beyond the range of a double)");
  }
  if (sax.duplicate()) throw ConfigError(*sax.duplicate(), "duplicate key in " + source_name);
  return doc;
}

std::string byte_limit_text(std::size_t bytes) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  if (bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB (" + std::to_string(bytes) + " bytes)";
  return std::to_string(bytes) + " bytes";
}

bool read_file_bounded(const std::string& file, std::size_t max_bytes,
                       const std::function<void(std::string_view)>& chunk, const std::string& pointer,
                       const std::string& what) {
  const auto fail = [&](int err) {
    return ConfigError(pointer, "cannot read " + what + " '" + file + "': " + std::strerror(err));
  };
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(file.c_str(), "rb"), &std::fclose);
  if (!f) throw fail(errno);
  char buf[1 << 16];
  std::size_t total = 0;
  while (true) {
    // One byte past the limit tells a file at the limit from a longer one.
    const std::size_t want = std::min(sizeof buf, max_bytes - total + 1);
    const std::size_t n = std::fread(buf, 1, want, f.get());
    if (n == 0) break;
    if (total + n > max_bytes) return false;
    chunk(std::string_view(buf, n));
    total += n;
  }
  if (std::ferror(f.get())) throw fail(errno);  // e.g. EISDIR: fopen succeeds on a directory
  return true;
}

Json load_json_file(const std::string& file) {
  std::string text;
  if (!read_file_bounded(
          file, kMaxJsonFileBytes, [&text](std::string_view c) { text.append(c); }, "/", "scenario file"))
    throw ConfigError("/",
                      "scenario file '" + file + "' is larger than the limit of " + byte_limit_text(kMaxJsonFileBytes));
  return parse_json_text(text, file);
}

void apply_set(Json& doc, std::string_view assignment) {
  const std::string whole(assignment);
  const std::size_t eq = assignment.find('=');
  if (eq == std::string_view::npos) throw ConfigError("/", "--set expects path=value, got '" + whole + "'");
  const std::vector<SetToken> tokens = split_set_path(assignment.substr(0, eq), whole);
  const std::string value_text(assignment.substr(eq + 1));
  Json value = Json::parse(
      value_text,
      [&whole](int depth, Json::parse_event_t, Json&) {
        if (static_cast<std::size_t>(depth) > kMaxJsonNesting)
          throw ConfigError("/",
                            set_message(whole, "nesting deeper than " + std::to_string(kMaxJsonNesting) + " levels"));
        return true;
      },
      /*allow_exceptions=*/false);
  if (value.is_discarded()) value = value_text;  // not JSON: a bare string such as threaded or 0-3

  // Walk (creating missing members and appended elements as null), then assign once at the end. Only existing
  // arrays and scalars can fail the walk, and they fail before anything is created.
  Json* cur = &doc;
  std::string path;  // JSON pointer of *cur
  for (const auto& [token, bracketed] : tokens) {
    if (cur->is_null() && bracketed && token != "-")
      throw ConfigError(path, set_message(whole, "no array here to index (use [-] to append its first element)"));
    if (cur->is_null())  // a missing (or null) intermediate: an array before key[-], else an object
      *cur = bracketed ? Json::array() : Json::object();
    if (cur->is_object()) {
      cur = &(*cur)[token];
      path = json_pointer_append(path, token);
    } else if (cur->is_array()) {
      const std::size_t index = set_index(*cur, token, path, whole);
      if (index == cur->size()) cur->push_back(nullptr);
      cur = &(*cur)[index];
      path = json_pointer_append(path, index);
    } else {
      throw ConfigError(path, set_message(whole, "cannot set '" + token + "' inside " + describe_json_value(*cur)));
    }
  }
  *cur = std::move(value);
}

std::string json_pointer_append(const std::string& base, std::string_view key) {
  std::string out = base == "/" ? std::string() : base;
  out += '/';
  for (char ch : key) {
    if (ch == '~') {
      out += "~0";
    } else if (ch == '/') {
      out += "~1";
    } else {
      out += ch;
    }
  }
  return out;
}

std::string json_pointer_append(const std::string& base, std::size_t index) {
  return json_pointer_append(base, std::to_string(index));
}

std::string describe_json_value(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return v.get<bool>() ? "boolean true" : "boolean false";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "number " + v.dump();
    case Json::value_t::number_float:
      return "number " + format_number(v.get<double>());
    case Json::value_t::string: {
      const std::string& s = v.get_ref<const std::string&>();
      if (s.size() <= kMaxQuotedChars) return "string " + v.dump(-1, ' ', false, Json::error_handler_t::replace);
      return "string " + Json(s.substr(0, kMaxQuotedChars)).dump(-1, ' ', false, Json::error_handler_t::replace) +
             "...";
    }
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    default:
      return "invalid value";
  }
}

std::string format_number(double x) {
  if (std::isfinite(x) && x == std::trunc(x) && std::fabs(x) < 1e15) {
    return std::to_string(static_cast<std::int64_t>(x));
  }
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, res.ptr);
}

std::string format_description(const std::vector<FieldInfo>& rows) {
  constexpr std::size_t kMaxDefaultChars = 32;
  const auto default_text = [](const Json& d) {
    if (d.is_object() && !d.empty()) return std::string("{...}");
    std::string s = d.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (s.size() > kMaxDefaultChars) s = s.substr(0, kMaxDefaultChars - 3) + "...";
    return s;
  };
  std::vector<std::vector<std::string>> table;
  table.push_back({"NAME", "TYPE", "DEFAULT", "UNIT", "ALLOWED", "DESCRIPTION"});
  for (const auto& r : rows)
    table.push_back({r.name, r.type, default_text(r.default_value), r.unit, r.constraint, r.doc});
  std::vector<std::size_t> width(table.front().size(), 0);
  for (const auto& line : table) {
    for (std::size_t c = 0; c < line.size(); ++c)
      width[c] = std::max(width[c], line[c].size());
  }
  std::string out;
  for (const auto& line : table) {
    std::string text;
    for (std::size_t c = 0; c < line.size(); ++c) {
      text += line[c];
      if (c + 1 < line.size()) text += std::string(width[c] - line[c].size() + 2, ' ');
    }
    text.erase(text.find_last_not_of(' ') + 1);  // no trailing blanks when the last columns are empty
    out += text + '\n';
  }
  return out;
}

// ---- cores of sim/params/fields.hpp ----

namespace detail {

std::string bounds_text(double lo, double hi) {
  const std::string lo_text = lo > -kInf ? format_number(lo) : "";
  const std::string hi_text = hi < kInf ? format_number(hi) : "";
  if (!lo_text.empty() && !hi_text.empty()) return "[" + lo_text + ", " + hi_text + "]";
  if (!lo_text.empty()) return ">= " + lo_text;
  if (!hi_text.empty()) return "<= " + hi_text;
  return "";
}

std::string quoted_list(const std::vector<std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    out += Json(values[i]).dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  return out;
}

std::string int_list(const std::vector<std::int64_t>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(values[i]);
  }
  return out;
}

void check_int_choice(std::int64_t v, const std::vector<std::int64_t>& allowed, const std::string& path) {
  if (std::find(allowed.begin(), allowed.end(), v) == allowed.end())
    throw ConfigError(path, "expected one of " + int_list(allowed) + ", got " + std::to_string(v));
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  const auto lower = [](char ch) { return static_cast<char>(std::tolower(static_cast<unsigned char>(ch))); };
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t i = 0; i <= n; ++i)
    d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j)
    d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      // A swapped pair of letters (dev_wieght) counts as one edit.
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

void throw_type_error(const std::string& path, std::string_view expected, bool nullable, const Json& got) {
  throw ConfigError(
      path, "expected " + std::string(expected) + (nullable ? " or null" : "") + ", got " + describe_json_value(got));
}

void throw_unknown_key(const std::string& key_path, const std::string& key, const std::vector<std::string>& known) {
  if (known.empty()) throw ConfigError(key_path, "unknown key; this object takes no keys");
  std::string message = "unknown key; expected one of: ";
  for (std::size_t i = 0; i < known.size(); ++i)
    message += (i ? ", " : "") + known[i];
  // Suggest the closest declared name (first in declaration order on ties) if it is a plausible typo.
  std::size_t best = std::numeric_limits<std::size_t>::max();
  const std::string* suggestion = nullptr;
  for (const auto& name : known) {
    const std::size_t d = edit_distance(key, name);
    if (d < best) {
      best = d;
      suggestion = &name;
    }
  }
  if (suggestion && best <= 2 && best < key.size()) message += " (did you mean \"" + *suggestion + "\"?)";
  throw ConfigError(key_path, message);
}

bool parse_bool(const Json& j, const std::string& path, bool nullable) {
  if (!j.is_boolean()) throw_type_error(path, "boolean", nullable, j);
  return j.get<bool>();
}

std::int64_t parse_signed(const Json& j, const std::string& path, std::int64_t type_min, std::int64_t type_max,
                          double lo, double hi, bool nullable) {
  if (!j.is_number()) throw_type_error(path, "integer", nullable, j);
  const std::optional<Integral> v = integral_value(j);
  if (!v) throw_type_error(path, "integer", nullable, j);
  const std::uint64_t max_negative = static_cast<std::uint64_t>(-(type_min + 1)) + 1;
  const bool fits = !v->beyond_64_bits &&
                    (v->negative ? v->magnitude <= max_negative : v->magnitude <= static_cast<std::uint64_t>(type_max));
  const bool narrow = type_min != std::numeric_limits<std::int64_t>::min();
  const auto fail = [&](bool below, bool above) {
    throw ConfigError(path, "expected " +
                                integer_expectation(lo, hi, std::to_string(type_min), std::to_string(type_max),
                                                    static_cast<double>(type_min), static_cast<double>(type_max),
                                                    narrow || below, narrow || above) +
                                ", got " + number_text(j));
  };
  if (!fits) fail(v->negative, !v->negative);
  const std::int64_t value =
      v->negative ? -static_cast<std::int64_t>(v->magnitude - 1) - 1 : static_cast<std::int64_t>(v->magnitude);
  const double d = static_cast<double>(value);
  if (d < lo || d > hi) fail(false, false);
  return value;
}

std::uint64_t parse_unsigned(const Json& j, const std::string& path, std::uint64_t type_max, double lo, double hi,
                             bool nullable) {
  if (!j.is_number()) throw_type_error(path, "integer", nullable, j);
  const std::optional<Integral> v = integral_value(j);
  if (!v) throw_type_error(path, "integer", nullable, j);
  const bool fits = !v->beyond_64_bits && (!v->negative || v->magnitude == 0) && v->magnitude <= type_max;
  const bool narrow = type_max != std::numeric_limits<std::uint64_t>::max();
  const auto fail = [&](bool above) {
    throw ConfigError(path, "expected " +
                                integer_expectation(lo, hi, "0", std::to_string(type_max), 0.0,
                                                    static_cast<double>(type_max), true, narrow || above) +
                                ", got " + number_text(j));
  };
  if (!fits) fail(!v->negative);
  const double d = static_cast<double>(v->magnitude);
  if (d < lo || d > hi) fail(false);
  return v->magnitude;
}

double parse_double(const Json& j, const std::string& path, double lo, double hi, bool nullable) {
  if (!j.is_number()) throw_type_error(path, "number", nullable, j);
  const double d = j.get<double>();
  if (!std::isfinite(d)) throw_type_error(path, "finite number", nullable, j);
  if (d < lo || d > hi) {
    const std::string b = bounds_text(lo, hi);
    throw ConfigError(path, "expected number " + (b.front() == '[' ? "in " + b : b) + ", got " + number_text(j));
  }
  return d;
}

std::string parse_string(const Json& j, const std::string& path, const std::vector<std::string>* choices,
                         bool nullable) {
  if (!j.is_string()) throw_type_error(path, "string", nullable, j);
  const std::string& s = j.get_ref<const std::string&>();
  if (choices && !choices->empty() && std::find(choices->begin(), choices->end(), s) == choices->end()) {
    throw ConfigError(path, "expected one of " + quoted_list(*choices) + ", got " +
                                j.dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  return s;
}

}  // namespace detail
}  // namespace napisim
