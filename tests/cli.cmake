# Tests of the lipgnn command-line tool, through tests/test_cli.sh CASE.
# A stand-in for openblas_get_corename (LD_PRELOAD), to test the core-type fix
# on a machine whose OpenBLAS already picks the best core.
add_library(lg_fake_corename SHARED ${CMAKE_CURRENT_SOURCE_DIR}/fake_corename.c)
if(LG_SANITIZE)
  # a preloaded library must not pull in the sanitizer runtime after the program
  target_compile_options(lg_fake_corename PRIVATE -fno-sanitize=all)
  target_link_options(lg_fake_corename PRIVATE -fno-sanitize=all)
endif()
set(LG_FAKE_CORENAME_LIB $<TARGET_FILE:lg_fake_corename>)
foreach(case help info_trees info_datasets bad_input blas isa omp limits train demo checkpoint_v0 data_source outputs messages)
  add_test(NAME cli_${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_cli.sh ${case} $<TARGET_FILE:lipgnn>
                   ${CMAKE_CURRENT_BINARY_DIR} ${LG_FAKE_CORENAME_LIB})
  set_tests_properties(cli_${case} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
endforeach()
