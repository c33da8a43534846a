# valgrind memcheck on CLI training runs and a sample of the bad-input runs
# (tests/valgrind.sh; about 1-2 minutes). Not in sanitizer builds: valgrind and
# ASan exclude each other. Run alone with `ctest -L valgrind`.
if(NOT LG_SANITIZE AND NOT LG_FUZZ)
  add_test(NAME valgrind_cli
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/valgrind.sh $<TARGET_FILE:lipgnn> ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(valgrind_cli PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 1200 LABELS valgrind)
endif()
