# SPDX-License-Identifier: Apache-2.0
# cJSON was found by deps.cmake.
target_link_libraries(${name} PRIVATE PkgConfig::CJSON m)
