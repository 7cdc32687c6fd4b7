# SPDX-License-Identifier: Apache-2.0
# adbc-snap is two programs (front/front.c says why): the full tool, built
# from this directory as adbc-snap-core and installed in libexec/adbc/, and
# its front end, installed as adbc-snap, which runs `shell` through a
# session itself and every other command through adbc-snap-core. The front
# end needs the C library alone: with musl-gcc (ADBC_WITH_MUSL) it is a
# static musl program, which starts in a fraction of the time a glibc one
# takes (docs/serve.md, "How fast").
set_target_properties(adbc-snap PROPERTIES OUTPUT_NAME adbc-snap-core)
set(ADBC_TOOL_DEST ${CMAKE_INSTALL_LIBEXECDIR}/adbc)
file(RELATIVE_PATH _core_to_bin "${CMAKE_INSTALL_FULL_LIBEXECDIR}/adbc" "${CMAKE_INSTALL_FULL_BINDIR}")
file(RELATIVE_PATH _bin_to_core "${CMAKE_INSTALL_FULL_BINDIR}" "${CMAKE_INSTALL_FULL_LIBEXECDIR}/adbc")
target_compile_definitions(adbc-snap PRIVATE ADBC_SNAP_BIN_DIR="${_core_to_bin}")
# `adbc-snap agent` needs the agent (libcurl and cJSON); without it the
# command says so.
if(TARGET adbc_ops_agent)
  target_link_libraries(adbc-snap PRIVATE adbc_ops_agent)
endif()

set(ADBC_WITH_MUSL AUTO CACHE STRING "Build adbc-snap's front end static against musl (musl-gcc): AUTO, ON (musl-gcc required; sanitizer, fuzz and cross builds still use the compiler) or OFF")
set_property(CACHE ADBC_WITH_MUSL PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${ADBC_WITH_MUSL}" _musl)
set(_use_musl FALSE)
if(_musl STREQUAL "ON" OR _musl STREQUAL "AUTO")
  find_program(ADBC_MUSL_GCC musl-gcc)
  if(NOT ADBC_MUSL_GCC)
    set(_why "musl-gcc not found (Debian: musl-tools)")
    if(_musl STREQUAL "ON")
      message(FATAL_ERROR "ADBC_WITH_MUSL=ON: ${_why}")
    endif()
  elseif(ADBC_SANITIZE OR ADBC_TSAN OR ADBC_FUZZ OR CMAKE_CROSSCOMPILING)
    # The sanitizers need the compiler's runtime; musl-gcc builds for the host.
    set(_why "a sanitizer, fuzz or cross build: the front end is built with ${CMAKE_C_COMPILER}")
  else()
    set(_use_musl TRUE)
  endif()
elseif(NOT _musl STREQUAL "OFF")
  message(FATAL_ERROR "ADBC_WITH_MUSL must be AUTO, ON or OFF, not '${ADBC_WITH_MUSL}'")
endif()
adbc_feature(MUSL ${_use_musl})
if(_use_musl)
  message(STATUS "adbc: musl-gcc: used, adbc-snap's front end is static (ADBC_WITH_MUSL=${_musl})")
elseif(_musl STREQUAL "OFF")
  message(STATUS "adbc: musl-gcc: off, adbc-snap's front end is built with ${CMAKE_C_COMPILER} (ADBC_WITH_MUSL=OFF)")
else()
  message(STATUS "adbc: musl-gcc: not used, ${_why} (ADBC_WITH_MUSL=${_musl})")
endif()

# The front end: its own source, the session lookup it shares with the full
# tool, and the library's sans-IO engine with what it needs (no OpenSSL,
# no threads).
set(_front_srcs ${dir}/front/front.c ${dir}/session_find.c)
foreach(f session/banner session/packet session/sendq session/session session/stream
          services/shell_proto core/error core/alloc core/abi core/clock)
  list(APPEND _front_srcs ${PROJECT_SOURCE_DIR}/lib/${f}.c)
endforeach()
set(_front_out ${CMAKE_CURRENT_BINARY_DIR}/adbc-snap)
if(_use_musl)
  set(_flags -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -static
      -DADBC_SNAP_CORE_DIR="${_bin_to_core}"
      -I${PROJECT_SOURCE_DIR}/include -I${PROJECT_SOURCE_DIR}/lib -I${dir})
  if(ADBC_WERROR)
    list(APPEND _flags -Werror)
  endif()
  # A stamp stands for the program: CMake takes an output named after
  # the target adbc-snap for that target and sees a cycle.
  add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/adbc-snap-front.stamp
                     COMMAND ${ADBC_MUSL_GCC} ${_flags} -o ${_front_out} ${_front_srcs}
                     COMMAND ${CMAKE_COMMAND} -E touch ${CMAKE_CURRENT_BINARY_DIR}/adbc-snap-front.stamp
                     DEPENDS ${_front_srcs} ${dir}/session_find.h ${dir}/write_all.h
                     IMPLICIT_DEPENDS C ${_front_srcs}
                     COMMENT "Building adbc-snap (front end, static, musl)" VERBATIM)
  add_custom_target(adbc-snap-front ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/adbc-snap-front.stamp)
else()
  add_executable(adbc-snap-front ${_front_srcs})
  set_target_properties(adbc-snap-front PROPERTIES OUTPUT_NAME adbc-snap)
  target_include_directories(adbc-snap-front PRIVATE ${PROJECT_SOURCE_DIR}/include
                             ${PROJECT_SOURCE_DIR}/lib ${dir})
  target_compile_definitions(adbc-snap-front PRIVATE ADBC_SNAP_CORE_DIR="${_bin_to_core}")
  target_link_libraries(adbc-snap-front PRIVATE m)
endif()
# Building adbc-snap builds both halves.
add_dependencies(adbc-snap adbc-snap-front)
if(_use_musl)
  install(PROGRAMS ${_front_out} DESTINATION ${CMAKE_INSTALL_BINDIR})
else()
  install(TARGETS adbc-snap-front RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
