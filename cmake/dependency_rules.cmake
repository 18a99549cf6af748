# The dependency rules between rankwatch's libraries (README.md, "Layout"),
# checked at configure time: a library that links a rankwatch library it may
# not use, (for the pure ones) an outside library, or whose sources include
# a header of a library it cannot reach, fails the configure step with one
# line naming the edge.
#
# Every library stands on a floor, and a rule may only allow libraries on
# lower floors, declared before it: an arrow upward or a cycle cannot be
# written. Every rankwatch_* library and the rankwatch binary must have a
# rule (the check at the end): a new library cannot escape by having none.
#
# rankwatch_check_links(<target> FLOOR <n> ALLOWED <rankwatch targets...>
#                       [EXTERNAL_ONLY <outside libraries...>])
#
# ALLOWED is what <target> may link; its sources (and the headers of its
# own they include) may include the headers of <target>, of the ALLOWED
# libraries and of what those may link in turn (a header reached through a
# link), never the headers of another library or of tests/.

# The folder of each library's headers, as #include "<folder>/x.h" names it.
set(rankwatch_header_folders
  base base metrics metrics trec trec config config
  daemon/stream/decode stream_decode
  daemon/stream/aggregation stream_aggregation
  daemon/stream/join stream_join
  daemon/stream/experiments stream_experiments
  daemon/stream/interleaving stream_interleaving
  daemon/stream/judges stream_judges
  daemon/stream/pipeline stream daemon/stream stream daemon/kafka kafka daemon/sim sim daemon/http http
  daemon/exporter exporter daemon/page page daemon/server server
  daemon/cli cli python python tests testing)

# The library (short name: "stream") whose header `include` is, or "" for a
# header from outside rankwatch (<...> or a folder not listed).
function(rankwatch_header_owner include out)
  set(owner "")
  set(pairs ${rankwatch_header_folders})
  while(pairs)
    list(POP_FRONT pairs folder name)
    if(include MATCHES "^${folder}/")
      set(owner "${name}")
      break()
    endif()
  endwhile()
  set(${out} "${owner}" PARENT_SCOPE)
endfunction()

# The rankwatch libraries (short names) `short` may reach: its ALLOWED list,
# and theirs, down to base.
function(rankwatch_reach short out)
  get_property(reach GLOBAL PROPERTY RANKWATCH_REACH_${short})
  set(${out} ${reach} PARENT_SCOPE)
endfunction()

# Fails when a source of `target`, or a header of its own that one
# includes, includes a rankwatch header outside `reach` (short names, itself
# included). Headers beside the sources that none of them includes (test
# helpers) are not the library's.
function(rankwatch_check_includes target reach)
  string(REGEX REPLACE "^rankwatch_?" "" short "${target}")
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(pending "")
  foreach(source IN LISTS sources)
    if(source MATCHES "^\\$<")
      continue()
    endif()
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY "${source_dir}"
               NORMALIZE OUTPUT_VARIABLE path)
    # Generated sources (the status page) are not the rules' business.
    # (also when the build folder is inside the source tree, as
    # scripts/test.sh's build-test is).
    cmake_path(IS_PREFIX PROJECT_SOURCE_DIR "${path}" NORMALIZE in_tree)
    cmake_path(IS_PREFIX PROJECT_BINARY_DIR "${path}" NORMALIZE generated)
    if(in_tree AND NOT generated AND EXISTS "${path}")
      list(APPEND pending "${path}")
    endif()
  endforeach()
  set(seen "")
  while(pending)
    list(POP_FRONT pending path)
    if(path IN_LIST seen)
      continue()
    endif()
    list(APPEND seen "${path}")
    file(STRINGS "${path}" lines REGEX "^#include \"")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" include "${line}")
      rankwatch_header_owner("${include}" owner)
      if(owner AND NOT owner IN_LIST reach)
        file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${path}")
        message(FATAL_ERROR
          "dependency rule: ${rel} (${target}) may not include ${include} "
          "(rankwatch::${owner}; ${target} reaches: ${reach})")
      endif()
      if(owner STREQUAL short AND EXISTS "${PROJECT_SOURCE_DIR}/${include}")
        list(APPEND pending "${PROJECT_SOURCE_DIR}/${include}")
      endif()
    endforeach()
  endwhile()
endfunction()

function(rankwatch_check_links target)
  cmake_parse_arguments(RULE "" "FLOOR" "ALLOWED;EXTERNAL_ONLY" ${ARGN})
  string(REGEX REPLACE "^rankwatch_?" "" short "${target}")
  if(short STREQUAL "")
    set(short binary)
  endif()
  if(NOT RULE_FLOOR MATCHES "^[0-9]+$")
    message(FATAL_ERROR "dependency rule: ${target} has no FLOOR")
  endif()
  # What it may reach, and no arrow to its own floor or above (which also
  # rules out cycles): an allowed library is declared before, lower down.
  set(reach ${short})
  foreach(allowed IN LISTS RULE_ALLOWED)
    string(REGEX REPLACE "^rankwatch::" "" name "${allowed}")
    get_property(floor GLOBAL PROPERTY RANKWATCH_FLOOR_${name})
    if(floor STREQUAL "" OR NOT floor LESS RULE_FLOOR)
      message(FATAL_ERROR
        "dependency rule: ${target} (floor ${RULE_FLOOR}) may not depend on "
        "${allowed} (floor ${floor}): only on floors below, declared first")
    endif()
    rankwatch_reach(${name} below)
    list(APPEND reach ${below})
  endforeach()
  list(REMOVE_DUPLICATES reach)
  set_property(GLOBAL PROPERTY RANKWATCH_FLOOR_${short} ${RULE_FLOOR})
  set_property(GLOBAL PROPERTY RANKWATCH_REACH_${short} ${reach})
  set_property(GLOBAL APPEND PROPERTY RANKWATCH_RULED ${target})

  get_target_property(libs ${target} LINK_LIBRARIES)
  get_target_property(interface_libs ${target} INTERFACE_LINK_LIBRARIES)
  foreach(lib IN LISTS libs interface_libs)
    # Generator expressions (e.g. from find_package targets) are not edges.
    if(NOT lib OR lib MATCHES "^\\$<")
      continue()
    endif()
    # A library linked by its own name rather than its ALIAS is the same
    # edge.
    if(lib MATCHES "^rankwatch_(.+)$" AND TARGET "${lib}")
      set(lib "rankwatch::${CMAKE_MATCH_1}")
    endif()
    if(lib MATCHES "^rankwatch::")
      if(NOT lib IN_LIST RULE_ALLOWED)
        message(FATAL_ERROR
          "dependency rule: ${target} may not link ${lib} (allowed: ${RULE_ALLOWED})")
      endif()
    elseif(DEFINED RULE_EXTERNAL_ONLY AND NOT lib IN_LIST RULE_EXTERNAL_ONLY)
      message(FATAL_ERROR
        "dependency rule: ${target} may not link ${lib} (outside libraries allowed: ${RULE_EXTERNAL_ONLY})")
    endif()
  endforeach()
  rankwatch_check_includes(${target} "${reach}")
endfunction()

# Floor 0 to 13, bottom up.
rankwatch_check_links(rankwatch_base FLOOR 0 ALLOWED EXTERNAL_ONLY "")
rankwatch_check_links(rankwatch_metrics FLOOR 1 ALLOWED rankwatch::base
  EXTERNAL_ONLY Boost::boost Boost::headers)
rankwatch_check_links(rankwatch_trec FLOOR 2
  ALLOWED rankwatch::base rankwatch::metrics
  EXTERNAL_ONLY Threads::Threads ZLIB::ZLIB PkgConfig::ZSTD)
# The Python module (python/), on the floor above trec: the engine's
# libraries, nothing of the daemon; nanobind and Python besides.
if(RANKWATCH_BUILD_PYTHON)
  rankwatch_check_links(rankwatch_python FLOOR 3 ALLOWED rankwatch::base
    rankwatch::metrics rankwatch::trec)
endif()
# The daemon's libraries (RANKWATCH_BUILD_DAEMON, off in the Python build).
if(RANKWATCH_BUILD_DAEMON)
rankwatch_check_links(rankwatch_http FLOOR 1 ALLOWED rankwatch::base)
rankwatch_check_links(rankwatch_config FLOOR 2
  ALLOWED rankwatch::base rankwatch::metrics)
rankwatch_check_links(rankwatch_sim FLOOR 2
  ALLOWED rankwatch::base rankwatch::metrics)
# The stream's rooms (daemon/stream/<room>/), one concept each; the pipeline
# (rankwatch::stream) wires them and is what the daemon's layers link.
rankwatch_check_links(rankwatch_stream_decode FLOOR 3 ALLOWED rankwatch::base
  rankwatch::metrics rankwatch::config)
rankwatch_check_links(rankwatch_stream_aggregation FLOOR 4
  ALLOWED rankwatch::stream_decode)
rankwatch_check_links(rankwatch_stream_join FLOOR 4
  ALLOWED rankwatch::stream_decode rankwatch::trec)
rankwatch_check_links(rankwatch_stream_experiments FLOOR 5
  ALLOWED rankwatch::stream_aggregation)
rankwatch_check_links(rankwatch_stream_judges FLOOR 5
  ALLOWED rankwatch::stream_join rankwatch::stream_aggregation)
rankwatch_check_links(rankwatch_stream_interleaving FLOOR 6
  ALLOWED rankwatch::stream_experiments)
rankwatch_check_links(rankwatch_stream FLOOR 7 ALLOWED rankwatch::stream_decode
  rankwatch::stream_aggregation rankwatch::stream_join
  rankwatch::stream_experiments rankwatch::stream_interleaving
  rankwatch::stream_judges)
rankwatch_check_links(rankwatch_kafka FLOOR 8 ALLOWED rankwatch::base
  rankwatch::metrics rankwatch::config rankwatch::stream)
rankwatch_check_links(rankwatch_exporter FLOOR 9 ALLOWED rankwatch::base
  rankwatch::metrics rankwatch::config rankwatch::stream rankwatch::kafka
  rankwatch::http)
rankwatch_check_links(rankwatch_page FLOOR 10 ALLOWED rankwatch::base
  rankwatch::metrics rankwatch::config rankwatch::stream rankwatch::kafka
  rankwatch::http rankwatch::exporter)
rankwatch_check_links(rankwatch_server FLOOR 11 ALLOWED rankwatch::base
  rankwatch::metrics rankwatch::config rankwatch::stream rankwatch::kafka
  rankwatch::http rankwatch::exporter rankwatch::page)
# The subcommands, on the floor above the server: the libraries below, sim
# included (the one the server may not link), and of outside libraries only
# CLI11 and spdlog (everything else comes through the libraries below); no
# library may link the CLI (it is on no floor below any of them).
rankwatch_check_links(rankwatch_cli FLOOR 12 ALLOWED rankwatch::base
  rankwatch::metrics rankwatch::trec rankwatch::config rankwatch::stream
  rankwatch::kafka rankwatch::sim rankwatch::http rankwatch::exporter
  rankwatch::page rankwatch::server
  EXTERNAL_ONLY CLI11::CLI11 spdlog::spdlog)
# The binary is main.cc over the CLI, nothing else of rankwatch.
rankwatch_check_links(rankwatch FLOOR 13 ALLOWED rankwatch::cli
  EXTERNAL_ONLY spdlog::spdlog)
endif()

# Every library of rankwatch has its rule: walk the folders configured so
# far (tests/ and bench/ come after this file and are not libraries of the
# product).
function(rankwatch_check_every_library_ruled dir)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(ruled GLOBAL PROPERTY RANKWATCH_RULED)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if((type MATCHES "_LIBRARY$" AND t MATCHES "^rankwatch_") OR
       t STREQUAL "rankwatch")
      if(NOT t IN_LIST ruled)
        message(FATAL_ERROR
          "dependency rule: ${t} has no rule in cmake/dependency_rules.cmake")
      endif()
    endif()
  endforeach()
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    rankwatch_check_every_library_ruled("${sub}")
  endforeach()
endfunction()
rankwatch_check_every_library_ruled("${PROJECT_SOURCE_DIR}")
