// napisim: error taxonomy (gem5's fatal vs panic).
//
// ConfigError is the user's fault (bad scenario, bad override, bad CLI argument): the CLI exits with
// status 2 and Python raises ValueError (pybind11 maps std::invalid_argument). The message always
// starts with the JSON pointer of the offending value, e.g.
//   "/nics/0/rx_queues: expected integer in [1, 1024], got 0".
// NAPISIM_ASSERT is for invariants: a failure is a napisim bug and aborts with a message.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace napisim {

class ConfigError : public std::invalid_argument {
 public:
  ConfigError(const std::string& path, const std::string& message)
      : std::invalid_argument((path.empty() ? std::string("/") : path) + ": " + message)
      , path_(path.empty() ? "/" : path) {}
  /// JSON pointer of the offending value ("/" for the document itself).
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

[[noreturn]] inline void assert_fail(const char* expr, const char* file, int line, const char* msg) {
  std::fprintf(stderr, "napisim: internal error: %s:%d: assertion '%s' failed%s%s\n", file, line, expr,
               msg[0] ? ": " : "", msg);
  std::abort();
}

}  // namespace napisim

#define NAPISIM_ASSERT(cond, msg)                                        \
  do {                                                                   \
    if (!(cond)) ::napisim::assert_fail(#cond, __FILE__, __LINE__, msg); \
  } while (0)
