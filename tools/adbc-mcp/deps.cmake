# SPDX-License-Identifier: Apache-2.0
# adbc-mcp speaks JSON through cJSON (Debian: libcjson-dev), a dependency of
# this program only, never of libadbc.
adbc_optional_dep(CJSON libcjson TOOL DOC "JSON for adbc-mcp; without it adbc-mcp is not built")
if(NOT ADBC_HAVE_CJSON)
  message(STATUS "adbc: adbc-mcp not built (needs libcjson)")
  set(ADBC_SKIP_TOOL TRUE)
endif()
