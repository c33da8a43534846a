# lipgnn --model cosine (train, lipschitz, depth-study), through tests/test_cosine_cli.sh.
add_test(NAME cli_cosine
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_cosine_cli.sh $<TARGET_FILE:lipgnn> ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(cli_cosine PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
