# lipgnn gradmap: the SVG heat-map of grad-log files, through tests/test_gradmap.sh.
add_test(NAME cli_gradmap
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_gradmap.sh $<TARGET_FILE:lipgnn> ${CMAKE_CURRENT_SOURCE_DIR})
set_tests_properties(cli_gradmap PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
