# Tests of the lipgnn command-line tool, through tests/test_cli.sh CASE.
foreach(case help info_trees info_datasets bad_input blas train demo)
  add_test(NAME cli_${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_cli.sh ${case} $<TARGET_FILE:lipgnn>
                   ${CMAKE_CURRENT_SOURCE_DIR})
  set_tests_properties(cli_${case} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
endforeach()
