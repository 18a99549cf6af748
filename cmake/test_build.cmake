# How the test build compiles. On two cores the sanitizer build took 17 min
# 42 s from nothing: half of it the test sources (151 of 306 files), each
# parsing GoogleTest and the libraries' headers and then generating
# instrumented code for every inline function and template it uses; the
# command-line files each compiled all of CLI11 (header-only in Debian,
# about 30 s a file). Two switches cut that to 6 min 43 s (Ninja, no
# ccache; 13 CPU-minutes instead of about 32):
#
# RANKWATCH_OPTIMIZE_TESTS=OFF (the default) compiles the test binaries and
# their helper libraries at -O0: half the time of -O1 under ASan
# (daemon/stream's first eight test files: 82 s -> 40 s on one core). Tests
# run the libraries' optimized code; their own code is set-up and
# assertions, except in the simulations that rankwatch_computing_test_sources
# names (below).
#
# CMAKE_UNITY_BUILD, which scripts/test.sh turns on, compiles every target's
# sources in batches of eight: each header is parsed, and its inline
# functions instrumented, once per batch (the same eight test files at -O0:
# 40 s -> 23 s; CLI11 once per batch of commands). It is CMake's own switch,
# off by default: editing one file then recompiles its batch. Two files of
# one target cannot define the same name in their anonymous namespaces
# (docs/conventions.md, "Tests").
option(RANKWATCH_OPTIMIZE_TESTS
       "Compile the tests' own sources with the build type's optimization (else -O0)" OFF)

# The test sources whose own loops are the work: Monte Carlo simulations
# that draw, rank and count in the test file (error rates, power). At -O0
# they ran about twice as long, each alone on an idle machine:
# MultileavingErrorRateTest 10.6 s at -O1 against 23.0 s at -O0,
# ab_unit_simulation_test 26.8 s against 46.4 s. So they keep the build
# type's optimization, each compiled on its own rather than in a batch
# (multileaving_sensitivity_test, whose loops are the library's, gained
# 4 s of 40: not listed). Call it in the folder that adds the target
# (source properties belong to a folder).
function(rankwatch_computing_test_sources)
  if(RANKWATCH_OPTIMIZE_TESTS OR NOT CMAKE_BUILD_TYPE)
    return()
  endif()
  string(TOUPPER "${CMAKE_BUILD_TYPE}" config)
  string(REGEX MATCHALL "-O[^ ]*" levels "${CMAKE_CXX_FLAGS_${config}}")
  if(NOT levels)
    return()
  endif()
  list(GET levels -1 level)
  # After the target's -O0 on the command line: the last -O wins.
  set_source_files_properties(${ARGN} PROPERTIES
    COMPILE_OPTIONS "${level}" SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()

# The test targets: executables named *_test and the tests' helper libraries
# (rankwatch_testing*), in `dir` and its subfolders.
function(rankwatch_test_targets dir out)
  set(found)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if((type STREQUAL "EXECUTABLE" AND target MATCHES "_test$") OR
       target MATCHES "^rankwatch_testing")
      list(APPEND found ${target})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    rankwatch_test_targets("${subdir}" below)
    list(APPEND found ${below})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

function(rankwatch_configure_test_builds)
  rankwatch_test_targets("${PROJECT_SOURCE_DIR}" targets)
  foreach(target IN LISTS targets)
    if(NOT RANKWATCH_OPTIMIZE_TESTS)
      # After the build type's flags on the command line: the last -O wins.
      # simdjson turns its development checks on when __OPTIMIZE__ is not
      # defined, and they add members to its parser: a test at -O0 would
      # see another layout of every class holding one (EventDecoder: 1,256
      # bytes against the library's 1,248) and corrupt what it moves. Off,
      # as in the libraries.
      target_compile_options(${target} PRIVATE -O0)
      target_compile_definitions(${target} PRIVATE SIMDJSON_DEVELOPMENT_CHECKS=0)
    endif()
  endforeach()
endfunction()
