# sprof_tool(TARGET "one-line description"): a command-line tool users run.
# One line in the tool's CMakeLists.txt gives it: installation to bin/,
# a man page TARGET.1 generated from its --help (docs/man/gen_man.sh, with
# docs/man/TARGET.txt as its description when present), and a place in
# tests/cli (--version, --help, a bad option: exit codes and prefixes), and
# bash completion (scripts/completion/sprof.bash, options from --help).
set(SPROF_MAN_DIR ${CMAKE_BINARY_DIR}/man)
function(sprof_tool target summary)
  install(TARGETS ${target} RUNTIME DESTINATION bin)
  set_property(GLOBAL APPEND PROPERTY SPROF_TOOLS ${target})
  set(page ${SPROF_MAN_DIR}/man1/${target}.1)
  set(gen ${CMAKE_SOURCE_DIR}/docs/man/gen_man.sh)
  set(desc ${CMAKE_SOURCE_DIR}/docs/man/${target}.txt)
  set(deps ${target} ${gen})
  if(EXISTS ${desc})
    list(APPEND deps ${desc})
  endif()
  add_custom_command(OUTPUT ${page}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${SPROF_MAN_DIR}/man1
    COMMAND sh ${gen} $<TARGET_FILE:${target}> ${target} "${summary}" ${PROJECT_VERSION} ${desc} > ${page}.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${page}.tmp ${page}
    DEPENDS ${deps} VERBATIM)
  add_custom_target(${target}-man ALL DEPENDS ${page})
  install(FILES ${page} DESTINATION share/man/man1)
  if(NOT target STREQUAL "sprof-cc") # its arguments are the compiler's
    install(FILES ${CMAKE_SOURCE_DIR}/scripts/completion/sprof.bash
            DESTINATION share/bash-completion/completions RENAME ${target})
  endif()
endfunction()
