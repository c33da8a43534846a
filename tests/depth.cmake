# lipgnn depth-study: the accuracy-against-depth grid, through tests/test_depth.sh.
add_test(NAME cli_depth_study
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_depth.sh $<TARGET_FILE:lipgnn> ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(cli_depth_study PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
