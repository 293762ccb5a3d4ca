add_kernelopt_test(test_agents
  test_agents_profiler.cpp
  test_agents_planner.cpp
  test_agents_tuner.cpp
  test_agents_prompt.cpp
  test_agents_answer.cpp
  test_agents_llm_session.cpp)
# The session is tested against a cpp-httplib server on loopback (see llm.cmake).
find_path(KERNELOPT_HTTPLIB_INCLUDE_DIR httplib.h REQUIRED)
find_library(KERNELOPT_HTTPLIB_LIBRARY cpp-httplib REQUIRED)
target_include_directories(test_agents SYSTEM PRIVATE ${KERNELOPT_HTTPLIB_INCLUDE_DIR})
target_compile_definitions(test_agents PRIVATE
  CPPHTTPLIB_OPENSSL_SUPPORT CPPHTTPLIB_ZLIB_SUPPORT CPPHTTPLIB_BROTLI_SUPPORT)
target_link_libraries(test_agents PRIVATE ${KERNELOPT_HTTPLIB_LIBRARY} Threads::Threads)
set_tests_properties(test_agents PROPERTIES TIMEOUT 120)
