# TESSEL_PYTHON: a Python 3 that imports numpy, for the numeric references of
# the tests and the benches. Debian's python3-numpy serves /usr/bin/python3,
# which need not be the first python3 on PATH (pyenv, venvs), so each
# candidate is tried. Empty when none has numpy (tests needing it are then
# reported UNSUPPORTED).
set(TESSEL_PYTHON "" CACHE FILEPATH "Python 3 interpreter that has numpy")
if(NOT TESSEL_PYTHON)
  find_program(tessel_path_python3 python3)
  foreach(candidate /usr/bin/python3 ${tessel_path_python3})
    if(EXISTS ${candidate})
      execute_process(COMMAND ${candidate} -c "import numpy" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
      if(rc EQUAL 0)
        set(TESSEL_PYTHON ${candidate} CACHE FILEPATH "Python 3 interpreter that has numpy" FORCE)
        break()
      endif()
    endif()
  endforeach()
endif()
if(NOT TESSEL_PYTHON)
  message(WARNING "no python3 with numpy found (apt-get install python3-numpy): numeric tests are skipped")
endif()
