# libFuzzer targets, one per trace reader and one for the config loader (included at the end of the top-level
# CMakeLists.txt by cmake/hardening.cmake when SMTLAB_FUZZ is ON; scripts/fuzz.sh builds and runs them). They link
# every layer (the config layer names policies from the core's tables), but not the program or the tests.
set(fuzz_targets text_trace native_trace config config_set source_spec)
if(EXISTS ${CMAKE_SOURCE_DIR}/include/smtlab/trace/champsim_format.hpp)
  list(APPEND fuzz_targets champsim_trace)
endif()
if(EXISTS ${CMAKE_SOURCE_DIR}/include/smtlab/tracer/raw_trace.hpp AND TARGET smtlab_obj_tracer)
  list(APPEND fuzz_targets tracer_raw)
endif()

foreach(name IN LISTS fuzz_targets)
  add_executable(fuzz_${name} ${CMAKE_CURRENT_LIST_DIR}/fuzz_${name}.cpp)
  target_include_directories(fuzz_${name} PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_CURRENT_LIST_DIR})
  # Linking an object library links its objects and its own dependencies (capstone for the tracer, ...).
  # The config layer's policy names come from the core's policy tables (core/fetch_policy.hpp), which need the rest
  # of the core: every layer comes.
  foreach(layer IN LISTS SMTLAB_LAYERS)
    if(TARGET smtlab_obj_${layer})
      target_link_libraries(fuzz_${name} PRIVATE smtlab_obj_${layer})
    endif()
  endforeach()
  target_link_libraries(fuzz_${name} PRIVATE smtlab_warnings)
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
endforeach()

# scripts/fuzz.sh reads the list of targets from here.
file(WRITE ${CMAKE_BINARY_DIR}/fuzz_targets.txt "${fuzz_targets}")
add_custom_target(fuzz_all)
foreach(name IN LISTS fuzz_targets)
  add_dependencies(fuzz_all fuzz_${name})
endforeach()
