# test_l2att also compiles the naive L2-attention oracle (tests/l2att_naive.c)
# and the shared test graphs (tests/testgraph.c).
if(TARGET test_l2att)
  target_sources(test_l2att PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/l2att_naive.c ${CMAKE_CURRENT_SOURCE_DIR}/testgraph.c)
endif()
