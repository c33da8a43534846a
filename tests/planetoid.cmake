# The Planetoid converter (tools/planetoid2mtx.py): converts
# $LIPGNN_DATA/planetoid-raw and compares it with $LIPGNN_DATA/cora by parsed
# content. Skipped (77) without LIPGNN_DATA or without /usr/bin/python3's numpy
# and scipy.
add_test(NAME planetoid_converter
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test_planetoid.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(planetoid_converter PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
