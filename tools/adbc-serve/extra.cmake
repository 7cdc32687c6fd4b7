# SPDX-License-Identifier: Apache-2.0
# libmicrohttpd (deps.cmake) and the operation layer (tools/ops).
target_link_libraries(${name} PRIVATE adbc_ops_json PkgConfig::MICROHTTPD PkgConfig::CJSON Threads::Threads)
# The inspector page, compiled in (page.cmake).
file(GLOB ADBC_SERVE_PAGE CONFIGURE_DEPENDS ${dir}/page/*.html ${dir}/page/*.js ${dir}/page/*.css)
set(ADBC_SERVE_PAGE_C ${CMAKE_CURRENT_BINARY_DIR}/adbc-serve-page.c)
add_custom_command(OUTPUT ${ADBC_SERVE_PAGE_C}
  COMMAND ${CMAKE_COMMAND} -DDIR=${dir}/page -DOUT=${ADBC_SERVE_PAGE_C} -P ${dir}/page.cmake
  DEPENDS ${ADBC_SERVE_PAGE} ${dir}/page.cmake
  COMMENT "Embedding the adbc-serve page")
target_sources(${name} PRIVATE ${ADBC_SERVE_PAGE_C})
# The agent's tasks (tasks.c) when the agent is built (libcurl).
if(TARGET adbc_ops_agent)
  target_link_libraries(${name} PRIVATE adbc_ops_agent)
endif()
# The farm (farm*.c) with hiredis (deps.cmake) and the agent.
if(ADBC_HAVE_HIREDIS AND TARGET adbc_ops_agent)
  target_link_libraries(${name} PRIVATE PkgConfig::HIREDIS OpenSSL::SSL)
  target_compile_definitions(${name} PRIVATE ADBC_HAVE_HIREDIS=1)
endif()
