# Runs an example program and checks its exit code and output (stdout and stderr together).
#   cmake -DEXE=... "-DARGS=a;b" -DCODE=0 "-DOUTPUT=regex" [-DGPU_ENV=B200] -P run_example.cmake
# CODE is a regular expression ("0|3" when it depends on the host having a GPU).
set(ENV{ATTNSEL_GPU} "${GPU_ENV}")
execute_process(COMMAND "${EXE}" ${ARGS} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${EXE} ${ARGS}\n${out}exit code ${code}")
if(NOT code MATCHES "^(${CODE})$")
  message(FATAL_ERROR "expected exit code ${CODE}, got ${code}")
endif()
if(NOT out MATCHES "${OUTPUT}")
  message(FATAL_ERROR "the output does not match: ${OUTPUT}")
endif()
