# SPDX-License-Identifier: Apache-2.0
# adbc-serve's HTTP server is libmicrohttpd (Debian: libmicrohttpd-dev; docs/serve.md
# says why), a dependency of this program only; it also needs cJSON (tools/ops).
adbc_optional_dep(MICROHTTPD libmicrohttpd TOOL DOC "HTTP server of adbc-serve; without it adbc-serve is not built")
if(NOT ADBC_HAVE_MICROHTTPD OR NOT ADBC_HAVE_CJSON)
  message(STATUS "adbc: adbc-serve not built (needs libmicrohttpd and libcjson)")
  set(ADBC_SKIP_TOOL TRUE)
endif()
# hiredis: the farm (--farm, docs/farm.md), nodes sharing one task queue on
# Redis; without it (or without the agent) adbc-serve refuses --farm.
adbc_optional_dep(HIREDIS hiredis TOOL DOC "Redis client for adbc-serve's farm (--farm); without it adbc-serve has no farm")
