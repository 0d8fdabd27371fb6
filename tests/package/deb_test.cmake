# ctest package.deb: builds the .deb with CPack from the build tree and reads it back with
# dpkg-deb. Run as: cmake -DBUILD_DIR=... -DOUT_DIR=... -DCPACK=... -DVERSION=... -P deb_test.cmake
file(REMOVE_RECURSE ${OUT_DIR})
file(MAKE_DIRECTORY ${OUT_DIR})
execute_process(COMMAND ${CPACK} -G DEB --config ${BUILD_DIR}/CPackConfig.cmake -B ${OUT_DIR}
                WORKING_DIRECTORY ${BUILD_DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cpack -G DEB failed (${rc}):\n${out}\n${err}")
endif()
file(GLOB debs ${OUT_DIR}/attnsel_*.deb)
list(LENGTH debs count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "expected one attnsel_*.deb in ${OUT_DIR}, found: ${debs}\n${out}")
endif()

execute_process(COMMAND dpkg-deb --info ${debs} RESULT_VARIABLE rc OUTPUT_VARIABLE info ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dpkg-deb --info ${debs}: ${err}")
endif()
execute_process(COMMAND dpkg-deb --contents ${debs} RESULT_VARIABLE rc OUTPUT_VARIABLE contents ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dpkg-deb --contents ${debs}: ${err}")
endif()

set(failures "")
foreach(field "Package: attnsel" "Version: ${VERSION}" "Maintainer: " "Description: " "Depends: [^\n]*libc6"
              "Architecture: ")
  if(NOT info MATCHES "${field}")
    string(APPEND failures "\n  control: no '${field}'")
  endif()
endforeach()

# A CMake list joined into the description shows as ';'.
if(info MATCHES "Description:[^\n]*\n[^\n]*;")
  string(APPEND failures "\n  control: a ';' in the description (a CMake list, not one string)")
endif()

# Paths the package must hold (dpkg-deb lists them as ./usr/...).
set(expected /bin/attnsel /include/attnsel/attnsel.h /include/attnsel/selection.hpp
             /include/attnsel/version.hpp /share/attnsel/data/engines/sglang/matrix-0.5.12.json /share/attnsel/data/gpus.json
             /share/attnsel/data/matrix.schema.json /cmake/attnsel/attnselConfig.cmake /pkgconfig/attnsel.pc)
# The man page, when the build installs one (tools/attnsel's install rules), compressed as Debian wants.
file(GLOB_RECURSE install_scripts ${BUILD_DIR}/tools/cmake_install.cmake)
foreach(script IN LISTS install_scripts)
  file(READ ${script} text)
  if(text MATCHES "man1")
    list(APPEND expected /share/man/man1/attnsel.1.gz /share/bash-completion/completions/attnsel
         /share/zsh/vendor-completions/_attnsel /share/fish/vendor_completions.d/attnsel.fish)
  endif()
endforeach()
foreach(path IN LISTS expected)
  string(REPLACE "." "\\." pattern "${path}")
  if(NOT contents MATCHES " \\./usr[^ \n]*${pattern}\n")
    string(APPEND failures "\n  contents: no ${path}")
  endif()
endforeach()
# pip installs the Python module; the .deb does not.
if(contents MATCHES "_attnsel[^/\n]*\\.so")
  string(APPEND failures "\n  contents: the Python module is in the package")
endif()

if(failures)
  message(FATAL_ERROR "${debs}:${failures}\n--- dpkg-deb --info\n${info}\n--- dpkg-deb --contents\n${contents}")
endif()
message(STATUS "${debs}: control fields and contents as expected")
