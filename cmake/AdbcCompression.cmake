# Sync v2 compression (push/pull with -z): zstd, lz4 and brotli, each an
# optional Debian library behind ADBC_WITH_<NAME>=AUTO|ON|OFF.
#   AUTO  use it when pkg-config finds it, and say which way it went
#   ON    require it: configuring fails when it is missing
#   OFF   never use it, even when installed
# What is used is recorded in ADBC_PC_REQUIRES_PRIVATE (pkg-config module
# names, for adbc.pc's Requires.private: a static link needs them) and in
# ADBC_COMPRESSION_TARGETS (what libadbc links).

set(ADBC_WITH_ZSTD AUTO CACHE STRING "sync compression with zstd (libzstd): AUTO, ON or OFF")
set(ADBC_WITH_LZ4 AUTO CACHE STRING "sync compression with lz4 (liblz4): AUTO, ON or OFF")
set(ADBC_WITH_BROTLI AUTO CACHE STRING "sync compression with brotli (libbrotli): AUTO, ON or OFF")
foreach(_v ADBC_WITH_ZSTD ADBC_WITH_LZ4 ADBC_WITH_BROTLI)
  set_property(CACHE ${_v} PROPERTY STRINGS AUTO ON OFF)
endforeach()

if(NOT DEFINED ADBC_PC_REQUIRES_PRIVATE)
  set(ADBC_PC_REQUIRES_PRIVATE "")
endif()
set(ADBC_COMPRESSION_TARGETS "")
set(ADBC_COMPRESSION_DEFS "")

# adbc_optional_pkg(NAME OPTION DEFINE MODULE...)
function(adbc_optional_pkg name option define)
  set(modules ${ARGN})
  string(TOUPPER "${${option}}" mode)
  if(NOT mode MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${option}=${${option}}: use AUTO, ON or OFF")
  endif()
  if(mode STREQUAL "OFF")
    message(STATUS "adbc: ${name}: off (${option}=OFF)")
    return()
  endif()
  pkg_check_modules(ADBC_PKG_${name} QUIET IMPORTED_TARGET ${modules})
  if(NOT ADBC_PKG_${name}_FOUND)
    if(mode STREQUAL "ON")
      message(FATAL_ERROR "adbc: ${option}=ON but pkg-config finds no ${modules} "
                          "(on Debian: apt-get install lib${name}-dev)")
    endif()
    message(STATUS "adbc: ${name}: not found, sync compression without it (${option}=AUTO)")
    return()
  endif()
  message(STATUS "adbc: ${name}: found ${modules} ${ADBC_PKG_${name}_VERSION}, "
                 "sync compression with it (${option}=${mode})")
  set(ADBC_COMPRESSION_TARGETS ${ADBC_COMPRESSION_TARGETS} PkgConfig::ADBC_PKG_${name} PARENT_SCOPE)
  set(ADBC_COMPRESSION_DEFS ${ADBC_COMPRESSION_DEFS} ${define}=1 PARENT_SCOPE)
  set(ADBC_PC_REQUIRES_PRIVATE ${ADBC_PC_REQUIRES_PRIVATE} ${modules} PARENT_SCOPE)
endfunction()

adbc_optional_pkg(zstd ADBC_WITH_ZSTD ADBC_HAVE_ZSTD libzstd)
adbc_optional_pkg(lz4 ADBC_WITH_LZ4 ADBC_HAVE_LZ4 liblz4)
adbc_optional_pkg(brotli ADBC_WITH_BROTLI ADBC_HAVE_BROTLI libbrotlienc libbrotlidec)
