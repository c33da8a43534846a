# test_gt also compiles the naive graph-transformer oracle (tests/gt_naive.c).
if(TARGET test_gt)
  target_sources(test_gt PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/gt_naive.c)
endif()
