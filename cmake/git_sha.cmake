# Writes OUT (a header defining NAPISIM_GIT_SHA) with the source tree's commit, plus
# "-dirty-<hash of the diff>" when tracked files have uncommitted changes. Run at every build, the
# file is rewritten only when the value changes, so results (context.git_sha) and the Python
# sweep cache keyed on it follow every rebuild instead of the last configure.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY "${SRC}"
                OUTPUT_VARIABLE sha OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT sha)
  set(sha "unknown")
else()
  execute_process(COMMAND git diff HEAD WORKING_DIRECTORY "${SRC}" OUTPUT_VARIABLE diff ERROR_QUIET)
  if(diff)
    string(SHA256 h "${diff}")
    string(SUBSTRING "${h}" 0 8 h)
    set(sha "${sha}-dirty-${h}")
  endif()
endif()
set(content "#define NAPISIM_GIT_SHA \"${sha}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUT}" "${content}")
endif()
