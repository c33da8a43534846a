# bench/run_all.py end to end on the smallest configuration (one epoch, no peer):
# the suite's plumbing, the wait setting it reads from `lipgnn --version`, and
# its JSON lines (tests/test_bench_suite.sh). Needs the benchmarks and Cora.
if(LG_BUILD_BENCH)
  add_test(NAME bench_suite
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_bench_suite.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
  set_tests_properties(bench_suite PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()
