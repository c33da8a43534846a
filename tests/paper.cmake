# tools/paper.sh (the commands behind docs/results.md) against lipgnn's options,
# through tests/test_paper.sh with a stand-in lipgnn (nothing is trained).
add_test(NAME paper_commands
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_paper.sh $<TARGET_FILE:lipgnn> ${CMAKE_CURRENT_SOURCE_DIR})
set_tests_properties(paper_commands PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
