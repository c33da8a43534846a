# test_lipschitz (the estimator) uses the shared test graphs (tests/testgraph.c).
if(TARGET test_lipschitz)
  target_sources(test_lipschitz PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/testgraph.c)
endif()
