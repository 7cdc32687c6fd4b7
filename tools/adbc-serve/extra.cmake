# adbc-serve's HTTP server is libmicrohttpd (ADBC_WITH_MICROHTTPD; docs/serve.md says why).
target_link_libraries(${name} PRIVATE PkgConfig::MICROHTTPD Threads::Threads)
