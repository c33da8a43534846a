# test_lipschitz (the estimator) uses the shared test graphs (tests/testgraph.c).
if(TARGET test_lipschitz)
  target_sources(test_lipschitz PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/testgraph.c)
endif()
# lipgnn lipschitz, through tests/test_lipschitz_cli.sh.
add_test(NAME cli_lipschitz
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_lipschitz_cli.sh $<TARGET_FILE:lipgnn> ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(cli_lipschitz PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
