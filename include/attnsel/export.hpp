// Symbol visibility for the shared library build; empty for the static one.
#pragma once

#if defined(ATTNSEL_SHARED)
#  if defined(_WIN32)
#    if defined(ATTNSEL_BUILDING)
#      define ATTNSEL_API __declspec(dllexport)
#    else
#      define ATTNSEL_API __declspec(dllimport)
#    endif
#  else
#    define ATTNSEL_API __attribute__((visibility("default")))
#  endif
#else
#  define ATTNSEL_API
#endif
