# `cmake --install` into a temporary prefix, then a consumer program built
# against it through pkg-config and through find_package(lipgnn).
if(NOT LG_SANITIZE)
  add_test(NAME install_consumer
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_install.sh ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  set_tests_properties(install_consumer PROPERTIES TIMEOUT 600 RUN_SERIAL TRUE)
endif()
