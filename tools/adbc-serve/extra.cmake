# SPDX-License-Identifier: Apache-2.0
# libmicrohttpd (deps.cmake) and the operation layer (tools/ops).
target_link_libraries(${name} PRIVATE adbc_ops_json PkgConfig::MICROHTTPD PkgConfig::CJSON Threads::Threads)
