# adbc-mcp speaks JSON through cJSON (Debian: libcjson-dev).
find_package(PkgConfig REQUIRED)
pkg_check_modules(CJSON REQUIRED IMPORTED_TARGET libcjson)
target_link_libraries(${name} PRIVATE PkgConfig::CJSON m)
