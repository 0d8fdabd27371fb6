# What the server_startup examples must do, however they were built and linked:
# attnsel_example_tests(TARGET) adds the tests for that executable to a consumer project.
set(ATTNSEL_RUN_EXAMPLE ${CMAKE_CURRENT_LIST_DIR}/run_example.cmake)

function(attnsel_example_tests target)
  set(run ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:${target}>)
  set(script -P ${ATTNSEL_RUN_EXAMPLE})
  string(REPLACE "." "\\." version "${ATTNSEL_EXPECTED_VERSION}")
  add_test(NAME valid_plan COMMAND ${run} "-DARGS=--gpu;sm90;mla" -DCODE=0
           "-DOUTPUT=attnsel ${version}, matrix .*launch flags: --attention-backend fa3 --page-size 1" ${script})
  add_test(NAME refuses_invalid_plan COMMAND ${run} "-DARGS=--gpu;sm90;--attention-backend;trtllm_mla;mla" -DCODE=1
           "-DOUTPUT=refusing to start.*\\[cell\\.compute-capability\\]" ${script})
  add_test(NAME unknown_gpu COMMAND ${run} "-DARGS=--gpu;QX7;mha" -DCODE=2 "-DOUTPUT=unknown GPU .QX7." ${script})
  add_test(NAME unknown_backend COMMAND ${run} "-DARGS=--gpu;sm90;--attention-backend;fa33;mha" -DCODE=2
           "-DOUTPUT=fa33.*did you mean 'fa3'" ${script})
  add_test(NAME gpu_from_environment COMMAND ${run} "-DARGS=deepseek-ai/DeepSeek-V3" -DGPU_ENV=B200 -DCODE=0
           "-DOUTPUT=launch flags: --" ${script})
  # No --gpu and no ATTNSEL_GPU: the probe decides (3 on a machine without a GPU).
  add_test(NAME probe COMMAND ${run} "-DARGS=mha" -DCODE=0|3 "-DOUTPUT=launch flags: |no (NVIDIA )?GPU found" ${script})
endfunction()
