# The fuzz harnesses (tests/fuzz) replayed without libFuzzer on their seed
# corpora and on the inputs of past findings (tests/fuzz/regressions/<harness>).
# The fuzzing itself: tools/fuzz.sh (clang, -DLG_FUZZ=ON).
set(LG_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
include(${LG_FUZZ_DIR}/harnesses.cmake)
foreach(h ${LG_FUZZ_HARNESSES})
  lg_fuzz_executable(fuzz_replay_${h} ${h} ${LG_FUZZ_DIR}/replay.c)
  set(inputs ${LG_FUZZ_DIR}/corpus/${h})
  if(EXISTS ${LG_FUZZ_DIR}/regressions/${h})
    list(APPEND inputs ${LG_FUZZ_DIR}/regressions/${h})
  endif()
  add_test(NAME fuzz_replay_${h} COMMAND fuzz_replay_${h} ${inputs})
  set_tests_properties(fuzz_replay_${h} PROPERTIES TIMEOUT 300 LABELS fuzz)
endforeach()
