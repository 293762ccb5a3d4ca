# Tests of src/llm. The HTTP providers are tested over loopback against
# cpp-httplib servers (Debian's libcpp-httplib-dev: a compiled library whose
# header must see the same feature macros it was built with, as its
# cpp-httplib.pc says).
find_path(KERNELOPT_HTTPLIB_INCLUDE_DIR httplib.h REQUIRED)
find_library(KERNELOPT_HTTPLIB_LIBRARY cpp-httplib REQUIRED)
add_kernelopt_test(test_llm
  test_llm_chat.cpp
  test_llm_budget.cpp
  test_llm_retry.cpp
  test_llm_spec.cpp
  test_llm_http.cpp
  test_llm_openai.cpp
  test_llm_anthropic.cpp
  test_llm_exec.cpp
  test_llm_relay.cpp)
target_include_directories(test_llm SYSTEM PRIVATE ${KERNELOPT_HTTPLIB_INCLUDE_DIR})
target_compile_definitions(test_llm PRIVATE
  CPPHTTPLIB_OPENSSL_SUPPORT CPPHTTPLIB_ZLIB_SUPPORT CPPHTTPLIB_BROTLI_SUPPORT)
find_package(ZLIB REQUIRED)  # the LLM tests gzip a body themselves (an answer that inflates past the cap)
target_link_libraries(test_llm PRIVATE ${KERNELOPT_HTTPLIB_LIBRARY} Threads::Threads ZLIB::ZLIB)
set_tests_properties(test_llm PROPERTIES TIMEOUT 120)
