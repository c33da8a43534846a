# test_gt also compiles the naive graph-transformer oracle (tests/gt_naive.c) and
# the shared test graphs (tests/testgraph.c).
if(TARGET test_gt)
  target_sources(test_gt PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/gt_naive.c ${CMAKE_CURRENT_SOURCE_DIR}/testgraph.c)
endif()
