# SPDX-License-Identifier: Apache-2.0
# cJSON and the operation layer (tools/ops), shared with adbc-serve.
target_link_libraries(${name} PRIVATE adbc_ops_json PkgConfig::CJSON m)
