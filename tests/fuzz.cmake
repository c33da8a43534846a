# The fuzz harnesses (tests/fuzz) replayed without libFuzzer on their seed
# corpora and on the inputs of past findings (tests/fuzz/regressions/<harness>),
# and again under valgrind memcheck where valgrind is installed and the build
# has no sanitizer: memcheck sees reads of uninitialised memory, which ASan
# does not (the harness bug of tests/fuzz/regressions/mtx/empty-first-line was
# one; libFuzzer's ASan build found it only after 2.7M executions).
# The fuzzing itself: tools/fuzz.sh (clang, -DLG_FUZZ=ON).
set(LG_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
include(${LG_FUZZ_DIR}/harnesses.cmake)
find_program(LG_VALGRIND valgrind)
foreach(h ${LG_FUZZ_HARNESSES})
  lg_fuzz_executable(fuzz_replay_${h} ${h} ${LG_FUZZ_DIR}/replay.c)
  set(inputs ${LG_FUZZ_DIR}/corpus/${h})
  if(EXISTS ${LG_FUZZ_DIR}/regressions/${h})
    list(APPEND inputs ${LG_FUZZ_DIR}/regressions/${h})
  endif()
  add_test(NAME fuzz_replay_${h} COMMAND fuzz_replay_${h} ${inputs})
  set_tests_properties(fuzz_replay_${h} PROPERTIES TIMEOUT 300 LABELS fuzz)
  if(LG_VALGRIND AND NOT LG_SANITIZE AND NOT LG_FUZZ)
    # OPENBLAS_CORETYPE: valgrind 3.19 cannot run AVX-512 code (tests/valgrind.sh)
    add_test(NAME valgrind_fuzz_replay_${h}
             COMMAND ${LG_VALGRIND} -q --tool=memcheck --error-exitcode=99 --track-origins=yes
                     $<TARGET_FILE:fuzz_replay_${h}> ${inputs})
    set_tests_properties(valgrind_fuzz_replay_${h} PROPERTIES TIMEOUT 600 LABELS "fuzz;valgrind"
                         ENVIRONMENT "OPENBLAS_CORETYPE=Haswell;OMP_NUM_THREADS=2")
  endif()
endforeach()
