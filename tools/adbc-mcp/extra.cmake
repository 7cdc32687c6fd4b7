# adbc-mcp speaks JSON through cJSON (Debian: libcjson-dev), as tools/ops does.
target_link_libraries(${name} PRIVATE PkgConfig::CJSON m)
