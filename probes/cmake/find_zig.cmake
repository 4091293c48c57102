# torchdock_find_zig(OUT): sets OUT to the zig executable, or to "" when there is none.
# Looks, in order, at $ZIG, a `zig` on PATH, and PyPI's `ziglang` package (which ships the
# binary inside the Python package and puts no `zig` on PATH; scripts/install-deps.sh
# installs it). Used by probes/CMakeLists.txt and by zig_toolchain.cmake.
function(torchdock_find_zig out)
  if(DEFINED ENV{ZIG} AND EXISTS "$ENV{ZIG}")
    set(${out} "$ENV{ZIG}" PARENT_SCOPE)
    return()
  endif()
  find_program(_torchdock_zig_on_path zig NO_CACHE)
  if(_torchdock_zig_on_path)
    set(${out} "${_torchdock_zig_on_path}" PARENT_SCOPE)
    return()
  endif()
  find_program(_torchdock_python NAMES python3 python NO_CACHE)
  set(found "")
  if(_torchdock_python)
    execute_process(
      COMMAND "${_torchdock_python}" -c
              "import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), 'zig'))"
      OUTPUT_VARIABLE zig OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND EXISTS "${zig}")
      set(found "${zig}")
    endif()
  endif()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()
