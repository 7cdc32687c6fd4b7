# SPDX-License-Identifier: Apache-2.0
# adbc-mcp speaks JSON through cJSON (Debian: libcjson-dev), a dependency of
# this program only, never of libadbc (ADBC_WITH_CJSON, in tools/CMakeLists.txt).
if(NOT ADBC_HAVE_CJSON)
  message(STATUS "adbc: adbc-mcp not built (needs libcjson)")
  set(ADBC_SKIP_TOOL TRUE)
endif()
