# Writes what the attnsel binary generates from its own CLI definition and data: the man page
# (gzip-compressed, as Debian installs man pages) and the bash, zsh and fish completions.
# Usage: cmake -DATTNSEL=path/to/attnsel -DOUT_DIR=dir -P generate_cli_docs.cmake
foreach(var ATTNSEL OUT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "generate_cli_docs.cmake: ${var} is not set")
  endif()
endforeach()
file(MAKE_DIRECTORY ${OUT_DIR})

function(attnsel_generate output)
  execute_process(COMMAND ${ATTNSEL} ${ARGN} OUTPUT_FILE ${OUT_DIR}/${output} RESULT_VARIABLE result
                  ERROR_VARIABLE error)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "attnsel ${ARGN} failed (${result}): ${error}")
  endif()
endfunction()

attnsel_generate(attnsel.1 man)
attnsel_generate(attnsel.bash completion bash)
attnsel_generate(_attnsel completion zsh)
attnsel_generate(attnsel.fish completion fish)
# gzip -9n: reproducible (no name, no time stamp), as dh_compress does.
file(REMOVE ${OUT_DIR}/attnsel.1.gz)
file(ARCHIVE_CREATE OUTPUT ${OUT_DIR}/attnsel.1.gz PATHS ${OUT_DIR}/attnsel.1 FORMAT raw COMPRESSION GZip
     COMPRESSION_LEVEL 9)
