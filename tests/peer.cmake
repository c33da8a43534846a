# The PyTorch peer's independent check (bench/peer_torch.py check): lipgnn's
# loss and gradients of one full-model step, from parameters it exports, match
# the peer's. Skipped (77), saying so, without /usr/bin/python3's torch.
add_executable(peer_export ${CMAKE_CURRENT_SOURCE_DIR}/peer_export.c)
target_link_libraries(peer_export PRIVATE lg_internal)
add_test(NAME peer_torch
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test_peer.sh $<TARGET_FILE:peer_export> ${PROJECT_SOURCE_DIR})
set_tests_properties(peer_torch PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
