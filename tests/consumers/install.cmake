# ctest fixture: installs the build into an empty prefix, as a packager or user would.
#   cmake -DBUILD_DIR=... -DPREFIX=... [-DCONFIG=Release] -P install.cmake
file(REMOVE_RECURSE "${PREFIX}")
set(config_args "")
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" ${config_args}
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${result}):\n${output}")
endif()
foreach(expected include/attnsel/attnsel.h include/attnsel/version.hpp share/attnsel/data/engines/sglang/matrix-0.5.12.json)
  if(NOT EXISTS "${PREFIX}/${expected}")
    message(FATAL_ERROR "cmake --install did not install ${expected}")
  endif()
endforeach()
