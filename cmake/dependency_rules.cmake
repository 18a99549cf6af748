# The dependency rules between rankwatch's libraries (README.md, "Layout"),
# checked at configure time: a library that links a rankwatch library it may
# not use, or (for the pure ones) an outside library, fails the configure
# step with one line naming the edge.
#
# rankwatch_check_links(<target> ALLOWED <rankwatch targets...>
#                       [EXTERNAL_ONLY <outside libraries...>])
function(rankwatch_check_links target)
  cmake_parse_arguments(RULE "" "" "ALLOWED;EXTERNAL_ONLY" ${ARGN})
  get_target_property(libs ${target} LINK_LIBRARIES)
  if(NOT libs)
    return()
  endif()
  foreach(lib IN LISTS libs)
    # Generator expressions (e.g. from find_package targets) are not edges.
    if(lib MATCHES "^\\$<")
      continue()
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
endfunction()

rankwatch_check_links(rankwatch_base ALLOWED EXTERNAL_ONLY "")
rankwatch_check_links(rankwatch_metrics ALLOWED rankwatch::base
  EXTERNAL_ONLY Boost::boost Boost::headers)
rankwatch_check_links(rankwatch_trec ALLOWED rankwatch::base rankwatch::metrics
  EXTERNAL_ONLY Threads::Threads ZLIB::ZLIB PkgConfig::ZSTD)
rankwatch_check_links(rankwatch_config ALLOWED rankwatch::base rankwatch::metrics)
rankwatch_check_links(rankwatch_stream ALLOWED rankwatch::base
  rankwatch::metrics rankwatch::trec rankwatch::config)
rankwatch_check_links(rankwatch_kafka ALLOWED rankwatch::base
  rankwatch::metrics rankwatch::config rankwatch::stream)
rankwatch_check_links(rankwatch_sim ALLOWED rankwatch::base rankwatch::metrics)
rankwatch_check_links(rankwatch_http ALLOWED rankwatch::base)
rankwatch_check_links(rankwatch_exporter ALLOWED rankwatch::base
  rankwatch::metrics rankwatch::config rankwatch::stream rankwatch::kafka
  rankwatch::http)
rankwatch_check_links(rankwatch_status ALLOWED rankwatch::base
  rankwatch::metrics rankwatch::config rankwatch::stream rankwatch::kafka
  rankwatch::http rankwatch::exporter)
rankwatch_check_links(rankwatch_server ALLOWED rankwatch::base
  rankwatch::metrics rankwatch::config rankwatch::stream rankwatch::kafka
  rankwatch::http rankwatch::exporter rankwatch::status)
# The subcommands: every library, sim included (the one the server may
# not link); no library may link the CLI (none lists it above).
rankwatch_check_links(rankwatch_cli ALLOWED rankwatch::base
  rankwatch::metrics rankwatch::trec rankwatch::config rankwatch::stream
  rankwatch::kafka rankwatch::sim rankwatch::http rankwatch::exporter
  rankwatch::status rankwatch::server)
# The binary is main.cc over the CLI, nothing else of rankwatch.
rankwatch_check_links(rankwatch ALLOWED rankwatch::cli)
