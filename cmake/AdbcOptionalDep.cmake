# SPDX-License-Identifier: Apache-2.0
# adbc_optional_dep(NAME PKGMODULES [TOOL] [DOC text]
#                   [CMAKE_PACKAGE pkg CMAKE_TARGET target LIB name])
#
# PKGMODULES: one pkg-config module, or a ;-list of them that go together.
# CMAKE_PACKAGE: where a distribution ships no .pc file for the library
# (Debian's libwslay-dev has only a CMake package), its CMake package is
# tried when pkg-config does not find the module: the imported target
# CMAKE_TARGET is used, adbc.pc gets -lLIB in Libs.private and the CMake
# package finds the same package again (ADBC_CMAKE_PACKAGES).
#
# An optional dependency found through pkg-config, behind the cache option
# ADBC_WITH_<NAME> = AUTO | ON | OFF:
#   OFF   never used, even when installed;
#   ON    required: configuring fails when it is missing;
#   AUTO  used when found, and the configure output says which way it went.
# When used: ADBC_HAVE_<NAME> is TRUE, the imported target PkgConfig::<NAME>
# exists, the module is appended to ADBC_PC_REQUIRES_PRIVATE (adbc.pc) and to
# ADBC_PKG_MODULES (the CMake package finds it again for a static link), and
# ADBC_HAVE_<NAME>=1 is appended to ADBC_LIB_DEFINES and PkgConfig::<NAME>
# to ADBC_LIB_DEPS. TOOL: a dependency of a program in tools/, not of the
# library: only ADBC_HAVE_<NAME> and the imported target are set.
function(adbc_optional_dep name module)
  cmake_parse_arguments(A "TOOL" "DOC;CMAKE_PACKAGE;CMAKE_TARGET;LIB" "" ${ARGN})
  set(ADBC_WITH_${name} AUTO CACHE STRING "Use ${module}: AUTO, ON or OFF. ${A_DOC}")
  set_property(CACHE ADBC_WITH_${name} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${ADBC_WITH_${name}}" want)
  set(have FALSE)
  if(want STREQUAL "OFF")
    message(STATUS "adbc: ${module}: off (ADBC_WITH_${name}=OFF)")
  elseif(want STREQUAL "ON" OR want STREQUAL "AUTO")
    if(want STREQUAL "ON" AND NOT A_CMAKE_PACKAGE)
      pkg_check_modules(${name} REQUIRED IMPORTED_TARGET GLOBAL ${module})
    else()
      pkg_check_modules(${name} QUIET IMPORTED_TARGET GLOBAL ${module})
    endif()
    set(via_cmake FALSE)
    if(NOT ${name}_FOUND AND A_CMAKE_PACKAGE)
      find_package(${A_CMAKE_PACKAGE} CONFIG QUIET)
      if(${A_CMAKE_PACKAGE}_FOUND AND TARGET ${A_CMAKE_TARGET})
        set(via_cmake TRUE)
      elseif(want STREQUAL "ON")
        message(FATAL_ERROR "adbc: ${module}: found neither by pkg-config nor as the CMake package ${A_CMAKE_PACKAGE} (ADBC_WITH_${name}=ON)")
      endif()
    endif()
    if(${name}_FOUND)
      set(have TRUE)
      message(STATUS "adbc: ${module} ${${name}_VERSION}: used (ADBC_WITH_${name}=${want})")
    elseif(via_cmake)
      set(have TRUE)
      message(STATUS "adbc: ${module} ${${A_CMAKE_PACKAGE}_VERSION}: used, from its CMake package (ADBC_WITH_${name}=${want})")
    else()
      message(STATUS "adbc: ${module}: not found, built without it (ADBC_WITH_${name}=AUTO; ON makes it required)")
    endif()
  else()
    message(FATAL_ERROR "ADBC_WITH_${name} must be AUTO, ON or OFF, not '${ADBC_WITH_${name}}'")
  endif()
  set(ADBC_HAVE_${name} ${have} PARENT_SCOPE)
  adbc_feature(${name} ${have})
  if(have AND NOT A_TOOL AND via_cmake)
    set(ADBC_PC_LIBS_PRIVATE ${ADBC_PC_LIBS_PRIVATE} -l${A_LIB} PARENT_SCOPE)
    set(ADBC_CMAKE_PACKAGES ${ADBC_CMAKE_PACKAGES} ${A_CMAKE_PACKAGE} PARENT_SCOPE)
    set(ADBC_LIB_DEFINES ${ADBC_LIB_DEFINES} ADBC_HAVE_${name}=1 PARENT_SCOPE)
    set(ADBC_LIB_DEPS ${ADBC_LIB_DEPS} ${A_CMAKE_TARGET} PARENT_SCOPE)
  elseif(have AND NOT A_TOOL)
    set(ADBC_PC_REQUIRES_PRIVATE ${ADBC_PC_REQUIRES_PRIVATE} ${module} PARENT_SCOPE)
    string(REPLACE ";" "," _mods "${module}")
    set(ADBC_PKG_MODULES ${ADBC_PKG_MODULES} "${name}=${_mods}" PARENT_SCOPE)
    set(ADBC_LIB_DEFINES ${ADBC_LIB_DEFINES} ADBC_HAVE_${name}=1 PARENT_SCOPE)
    set(ADBC_LIB_DEPS ${ADBC_LIB_DEPS} PkgConfig::${name} PARENT_SCOPE)
  endif()
endfunction()

# adbc_feature(NAME HAVE): record whether the build has the optional feature
# NAME, for build-features in the build directory (adbc_write_features).
# Tests read that file (tests/sh/lib.sh: t_built, t_need_built) instead of
# guessing from CMakeCache.txt, where AUTO leaves no trace of what was found.
function(adbc_feature name have)
  if(have)
    set_property(GLOBAL APPEND PROPERTY ADBC_FEATURES "${name}=ON")
  else()
    set_property(GLOBAL APPEND PROPERTY ADBC_FEATURES "${name}=OFF")
  endif()
endfunction()

# adbc_write_features(): write ${PROJECT_BINARY_DIR}/build-features, one
# NAME=ON|OFF a line, from every adbc_feature() call of the configure run.
# Rewritten only when it changes.
function(adbc_write_features)
  get_property(features GLOBAL PROPERTY ADBC_FEATURES)
  list(SORT features)
  string(REPLACE ";" "\n" body "${features}")
  file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/build-features
    CONTENT "# What this build has (cmake/AdbcOptionalDep.cmake, adbc_feature).\n${body}\n" @ONLY)
endfunction()
