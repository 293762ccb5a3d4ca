# Project-wide warning and sanitizer flags, applied through one interface target.
add_library(kernelopt_warnings INTERFACE)
target_compile_options(kernelopt_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
if(KERNELOPT_SANITIZE)
  target_compile_options(kernelopt_warnings INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer)
  target_link_options(kernelopt_warnings INTERFACE -fsanitize=address,undefined)
endif()

# add_kernelopt_test(NAME SOURCES...): one gtest executable registered with CTest.
function(add_kernelopt_test name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE kernelopt_core GTest::gtest_main kernelopt_warnings)
  target_compile_definitions(${name} PRIVATE
    KERNELOPT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "KERNELOPT_ROOT=${PROJECT_SOURCE_DIR};TRITON_INTERPRET=1")
endfunction()
